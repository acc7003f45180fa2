"""Deprecated alias of ``mechanics.model.chain``, the chain model.

Every name of ``model.chain`` is served from here with a DeprecationWarning;
``CosseratChain`` is the deprecated name of `model.chain.Chain`.
"""

import warnings


def __getattr__(name):
    """Serve ``model.chain``'s names, and ``CosseratChain`` as its ``Chain``, with a warning."""
    from ..model import chain
    target = 'Chain' if name == 'CosseratChain' else name
    if not hasattr(chain, target) or name.startswith('__'):
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    warnings.warn(f'cosserat.chain.{name} is deprecated: the one chain model is '
                  f'model.chain.Chain (use flexible_manipulator.mechanics.model.chain.'
                  f'{target})', DeprecationWarning, stacklevel=2)
    return getattr(chain, target)
