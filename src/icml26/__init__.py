"""icml26: working, tested implementations of 19 ICML 2026 systems, with executable paper claims.

Each system lives in its own sub-package ``icml26.<id>`` (see :mod:`icml26.registry`); importing
``icml26`` itself loads none of them.
"""

__version__ = "0.1.0"
