"""ConfigError and the checks of a configuration's values, each error naming its field.

Every check returns the value (converted: a float, an array) or raises `ConfigError` whose
message starts with the dotted path of the field (``links[1].beam.linear_density``) and
says what was expected. Model files (`model_config`), program files, settings and studies
share them.
"""

import contextlib
import difflib
import math

import numpy as np


class ConfigError(ValueError):
    """A configuration value is missing, of the wrong kind or out of range."""


@contextlib.contextmanager
def naming(field):
    """Turn a failure of the arithmetic on a block's values into a ConfigError naming it.

    Values that pass each field's own check can still be absurd together (a radius of
    1e300 m overflows its area; 1e-300 m divides by zero): the block is then named.
    """
    try:
        yield
    except ConfigError:
        raise
    except (ArithmeticError, ValueError) as error:
        raise ConfigError(f'{field}: {type(error).__name__}: {error}') from None


def number(value, field, minimum=-math.inf, strict_minimum=False, allow_infinite=False):
    """Return ``value`` as a float, checking that it is a real number in range."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f'{field}: expected a number, got {value!r}')
    value = float(value)
    if math.isnan(value) or (math.isinf(value) and not allow_infinite):
        raise ConfigError(f'{field}: expected a finite number, got {value}')
    if value < minimum or (strict_minimum and value == minimum):
        bound = '>' if strict_minimum else '>='
        raise ConfigError(f'{field}: must be {bound} {minimum:g}, got {value:g}')
    return value


def vector(value, field, size):
    """Return ``value`` as a float array of ``size`` finite numbers."""
    if not isinstance(value, (list, tuple)) or len(value) != size:
        raise ConfigError(f'{field}: expected a list of {size} numbers, got {value!r}')
    return np.array([number(item, f'{field}[{i}]') for i, item in enumerate(value)])


def name(value, field):
    """Return ``value`` if it is a usable ROS name component (frame, joint or link name)."""
    if not isinstance(value, str) or not value or not value.replace('_', 'a').isalnum():
        raise ConfigError(f'{field}: expected a non-empty name of letters, digits and '
                          f"underscores, got {value!r}")
    return value


def check_keys(mapping, field, required, optional=()):
    """Refuse a mapping with keys nobody reads (typos) or missing required keys.

    Unknown keys are reported first, with the closest allowed key: a misspelled required
    key would otherwise be reported as the correct key missing.
    """
    if not isinstance(mapping, dict):
        raise ConfigError(f'{field}: expected a mapping, got {mapping!r}')
    prefix = f'{field}.' if field else ''
    allowed = sorted(set(required) | set(optional))
    unknown = sorted(set(mapping) - set(allowed), key=str)
    if unknown:
        close = difflib.get_close_matches(str(unknown[0]), allowed, n=1)
        hint = f'did you mean {close[0]!r}? ' if close else ''
        raise ConfigError(f'{prefix}{unknown[0]}: unknown field ({hint}allowed: '
                          f'{", ".join(allowed)})')
    for key in required:
        if key not in mapping:
            raise ConfigError(f'{prefix}{key}: required field is missing')
