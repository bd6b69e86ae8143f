"""One agent's MCP servers: generated APIs (``ptc``) and JSON tools (``json``), started in the background."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from pydantic_ai.tools import ToolDefinition

from freeact_tui.mcp.discovery import (
    HYBRID_MISSING,
    SERVER_NAME,
    DiscoveryMode,
    ToolDiscovery,
    hybrid_available,
    hybrid_server,
)
from freeact_tui.mcp.json_tools import McpJsonTools
from freeact_tui.mcp.ptc import PtcApis, default_ptc_root, generate_ptc_sources
from freeact_tui.project.config import McpServerConfig
from freeact_tui.timeline import mark


class McpSetup:
    """Starts with the kernel, is awaited before the first model request, and reports problems once."""

    def __init__(
        self,
        servers: dict[str, McpServerConfig],
        ptc_root: Path | None = None,
        *,
        discovery: DiscoveryMode = "off",
        working_dir: Path | None = None,
    ) -> None:
        self.ptc = {n: c for n, c in servers.items() if c.enabled and c.mode == "ptc"}
        self.json = {n: c for n, c in servers.items() if c.enabled and c.mode == "json"}
        generated = ptc_root or default_ptc_root()
        self.root = generated if self.ptc else None
        self.notices: list[str] = []
        self.discovery = ToolDiscovery(generated, working_dir) if discovery != "off" else None
        if discovery == "hybrid" and SERVER_NAME not in self.json:
            if hybrid_available():
                self.json[SERVER_NAME] = hybrid_server(generated)
                self.discovery = None
            else:
                self.notices.append(HYBRID_MISSING)
        self.json_tools = McpJsonTools(self.json) if self.json else None
        self.apis: PtcApis | None = None
        self._task: asyncio.Task[list[str]] | None = None
        self._reported = False

    @property
    def empty(self) -> bool:
        return not self.ptc and not self.json

    def start(self) -> None:
        if self._task is None and not self.empty:
            self._task = asyncio.create_task(self._start())

    async def _start(self) -> list[str]:
        errors: list[str] = []

        async def ptc() -> None:
            if self.root is not None:
                mark("api_generation:start")
                self.apis = await generate_ptc_sources(self.ptc, self.root)
                mark("api_generation:end")
                errors.extend(str(e) for e in self.apis.errors)

        async def json_tools() -> None:
            if self.json_tools is not None:
                errors.extend(str(e) for e in await self.json_tools.start())

        await asyncio.gather(ptc(), json_tools())
        return errors

    async def ready(self) -> list[str]:
        """Wait for the servers; return their problems the first time only (they are shown once)."""
        errors = list(self.notices)
        if self._task is not None:
            try:
                errors += await asyncio.shield(self._task)
            except Exception as exc:  # never let MCP trouble stop the agent
                errors.append(f"MCP servers could not be set up: {exc}")
        if self._reported:
            return []
        self._reported = True
        return errors

    async def wait(self) -> None:
        """Wait until the servers are set up, without taking the report ``ready`` gives once."""
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._task)

    def description(self) -> str | None:
        if self.apis is None:
            return None
        return self.apis.description(discovery_tools=self.discovery is not None) or None

    def tool_definitions(self) -> list[ToolDefinition]:
        found = self.discovery.tool_definitions() if self.discovery is not None else []
        return found + (self.json_tools.tool_definitions() if self.json_tools is not None else [])

    def owns(self, name: str) -> bool:
        if self.discovery is not None and self.discovery.owns(name):
            return True
        return self.json_tools is not None and self.json_tools.owns(name)

    async def call(self, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        if self.discovery is not None and self.discovery.owns(name):
            return await asyncio.to_thread(self.discovery.call, name, args)
        assert self.json_tools is not None
        return await self.json_tools.call(name, args)

    async def stop(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        if self.json_tools is not None:
            await self.json_tools.stop()
