"""Recording runs to MCAP and plotting recordings (`recorder`, `series`, `figures`)."""
