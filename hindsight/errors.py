"""The one error class for bad input: a recipe, a file, a flag or a record the user gave.

Command lines turn a `UserError` into `error: <message>` and exit 2; any other exception is a
fault of the program and keeps its traceback. Every error the package raises about its input
derives from it (ConfigError, SFTSetError, InstanceError, RunError and the rest).
"""


class UserError(ValueError):
    """Input that cannot be used as given; the message names the file, line or field."""
