"""Exception types shared by the ViewDefinition compiler, the FHIRPath subset and the runner."""

from __future__ import annotations


class ViewDefinitionError(ValueError):
    """A ViewDefinition is invalid, or evaluating it hit an error the spec says must be reported.

    Raised by :func:`fhirqa.viewdef.compile_view` for structural problems and bad FHIRPath,
    and by :meth:`CompiledView.rows` for data-dependent violations (for example a
    ``collection: false`` column that yields several values).
    """


class FHIRPathSyntaxError(ViewDefinitionError):
    """A FHIRPath expression could not be tokenized or parsed.

    ``position`` is the 0-based character offset in ``expression`` where the problem was found.
    """

    def __init__(self, message: str, expression: str = "", position: int = -1) -> None:
        self.expression = expression
        self.position = position
        where = f" at position {position}" if position >= 0 else ""
        shown = f" in {expression!r}" if expression else ""
        super().__init__(f"{message}{where}{shown}")


class FHIRPathError(ViewDefinitionError):
    """A FHIRPath expression is well-formed but cannot be compiled or evaluated
    (unknown function, wrong argument count, a singleton expected but a collection found...)."""
