"""The deterministic atomic tools the agent calls; specs in ``tools/<name>.json``, contract in ``base``."""

from fhirqa.agent.tools.registry import FUNCTIONS, execute, load_tools, tool_specs

__all__ = ["FUNCTIONS", "execute", "load_tools", "tool_specs"]
