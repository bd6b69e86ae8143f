"""Programmatic tool calling: typed Python APIs generated for MCP servers, called from code actions.

For each enabled ``mode="ptc"`` server, ``generate_ptc_sources`` writes ``<root>/mcptools/<server>/
<tool>.py`` (mcpygen's code generators: a ``Params`` model, a ``Result`` model when the tool has an
output schema, and ``run(params)``). With ``<root>`` as the kernel's generated root (``execution.kernel.code_finder``), code runs
``from mcptools.calc import add; add.run(add.Params(a=1, b=2))``; the call goes to the executor's
tool server, which asks for approval (``ExecApproval(kind="mcp")``) and runs the server on demand.
Generation starts the server, which is slow, so a package is regenerated only when its config
changed. A package we did not generate (freeact's, in a shared ``.freeact/generated``) or one edited
since we generated it is the user's tool authoring: it is kept as it is, as freeact keeps it.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import importlib.metadata
import keyword
import os
import re
import shutil
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freeact_tui.mcp.ptc_marker import (
    DIGEST_FILE,
    baked_params,
    files_hash,
    ours_unedited,
    read_marker,
    same_server,
)
from freeact_tui.mcp.servers import (
    McpServerError,
    close_client,
    config_digest,
    connect,
    list_tools,
    server_params,
)
from freeact_tui.project import paths, refusals, trusted
from freeact_tui.project.config import McpServerConfig
from freeact_tui.project.generated_layout import MCPTOOLS
from freeact_tui.project.trust import note_own_writes

if TYPE_CHECKING:
    from mcp.types import Tool

PACKAGE = MCPTOOLS
# Past this many characters the generated APIs are not listed in the system prompt; the model
# discovers them from code instead (freeact's tool discovery).
LISTING_BUDGET = 4000
# Bump when the generated layout changes, so that caches are rebuilt.
_FORMAT_VERSION = "2"
_SUMMARY_CHARS = 200
_STALE_STAGING_SECONDS = 3600


def default_ptc_root() -> Path:
    """Where generated APIs live by default (the kernel's generated root)."""
    return paths.data_dir() / "generated"


@dataclass(frozen=True)
class PtcTool:
    """One generated tool module.

    Attributes:
        server: The package name under ``mcptools`` (the config name, ``-``/``.`` replaced by ``_``).
        module: The module name (sanitized tool name).
        tool: The MCP tool's original name (what approvals show).
        signature: ``run(Params(…)) -> …`` as generated.
        summary: The first paragraph of the tool's description.
    """

    server: str
    module: str
    tool: str
    signature: str
    summary: str


@dataclass
class PtcApis:
    """The generated APIs: what to put on the kernel's path and what to tell the model.

    Attributes:
        root: The kernel's generated root (it holds ``mcptools/``).
        tools: Every generated tool module, by server and module name.
        params: Per package name, the connection parameters baked into its ``__init__.py``
            (an executor can pin tool-server calls to these).
        errors: Servers whose API could not be generated (their package is absent).
        regenerated: Servers generated in this call; the others came from the cache.
    """

    root: Path
    tools: list[PtcTool] = field(default_factory=list)
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    errors: list[McpServerError] = field(default_factory=list)
    regenerated: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    """Servers whose package was made by freeact or edited by hand, and is used as it is."""

    def description(self, budget: int | None = None, discovery_tools: bool = False) -> str:
        """A listing of the modules and their signatures, for the system prompt (empty if none).

        Past ``budget`` characters (default ``LISTING_BUDGET``) the listing gives way to discovery:
        the servers with their tool counts, and how to list and read their modules (with
        ``discovery_tools``, through ``pytools_list_categories`` / ``pytools_list_tools``).
        """
        if not self.tools:
            return ""
        full = self._listing()
        if len(full) <= (LISTING_BUDGET if budget is None else budget):
            return full
        return self._discovery(discovery_tools)

    def _discovery(self, discovery_tools: bool = False) -> str:
        counts: dict[str, int] = {}
        for tool in self.tools:
            counts[tool.server] = counts.get(tool.server, 0) + 1
        servers = ", ".join(f"`{PACKAGE}.{server}` ({n} tools)" for server, n in counts.items())
        example = next(iter(counts))
        if discovery_tools:
            return (
                f"Package `{PACKAGE}`, one module per tool, in {servers}. There are too many to list here: "
                "find what you need with the tools `pytools_list_categories` and `pytools_list_tools`, "
                "read a tool's module (its `Params`, `run` and docstring) before you call "
                "`<tool>.run(<tool>.Params(...))`."
            )
        return (
            f"Package `{PACKAGE}`, one module per tool, in {servers}. There are too many to list here: "
            "discover what you need from code. List a server's tools with "
            f"`import pkgutil, {PACKAGE}.{example} as s; print([m.name for m in pkgutil.iter_modules(s.__path__)])`, "
            f"and read a tool's module (its `Params`, `run` and docstring) with `!cat` on `s.__path__[0]/<tool>.py` "
            "before you call `<tool>.run(<tool>.Params(...))`."
        )

    def _listing(self) -> str:
        first = self.tools[0]
        lines = [
            f"Package `{PACKAGE}`, one module per tool. Call a tool with its module's `run` and `Params`, "
            f"e.g. `from {PACKAGE}.{first.server} import {first.module}` then "
            f"`{first.module}.run({first.module}.Params(...))`. A tool without a `Result` model returns a string.",
        ]
        for server in dict.fromkeys(t.server for t in self.tools):
            lines.append(f"\nServer `{server}` (`{PACKAGE}.{server}`):")
            for tool in (t for t in self.tools if t.server == server):
                summary = f": {tool.summary}" if tool.summary else ""
                lines.append(f"- `{tool.module}.{tool.signature}`{summary}")
        return "\n".join(lines)


def package_name(server: str) -> str:
    """The Python package name of a server's API.

    Raises:
        McpServerError: The name cannot be made a Python identifier.
    """
    name = re.sub(r"[-. ]", "_", server)
    if not name.isidentifier() or keyword.iskeyword(name):
        raise McpServerError(
            server, "this name cannot be a Python package name; use letters, digits, `_` or `-`"
        )
    return name


async def generate_ptc_sources(
    servers: dict[str, McpServerConfig],
    root: Path,
    *,
    log_dir: Path | None = None,
    start_timeout: float | None = None,
    prune: bool = True,
) -> PtcApis:
    """Generate (or reuse) Python APIs for all enabled ``ptc``-mode servers.

    Servers are handled concurrently; one that fails is listed in ``errors`` and the others still
    get their APIs. Packages of servers no longer configured are removed.

    Args:
        servers: All configured servers (``json``-mode and disabled ones are skipped).
        root: The directory for ``mcptools/`` (see ``default_ptc_root``).
        log_dir: Where stdio servers' stderr goes while they are queried.
        start_timeout: Seconds a server may take to start (see ``servers.connect``).
        prune: Remove the packages we generated for servers no longer configured.

    Returns:
        The package root, the tool listing, the baked-in parameters and the errors.
    """
    apis = PtcApis(root=root)
    base = root / PACKAGE
    wanted: dict[str, tuple[str, McpServerConfig]] = {}
    for name, config in servers.items():
        if not config.enabled or config.mode != "ptc":
            continue
        try:
            pkg = package_name(name)
        except McpServerError as exc:
            apis.errors.append(exc)
            continue
        if pkg in wanted:
            apis.errors.append(McpServerError(name, f"its package name `{pkg}` is taken by another server"))
            continue
        wanted[pkg] = (name, config)
    try:
        base.mkdir(parents=True, exist_ok=True, mode=0o700)
        (base / "__init__.py").touch()
        if prune:
            _remove_unknown_packages(base, set(wanted))
    except OSError as exc:
        why = f"cannot write its Python API to {base}: {exc.strerror or exc}"
        apis.errors.extend(McpServerError(name, why) for name, _ in wanted.values())
        return apis
    # The package's ``__init__.py`` is the app's only as the app makes it: empty (``touch`` keeps any other).
    written: list[Path] = (
        [init] if (init := base / "__init__.py").is_file() and not init.stat().st_size else []
    )
    codegen = asyncio.Lock()  # the code generator is not known to be thread-safe
    jobs = [
        _ensure_package(base, pkg, name, cfg, codegen, log_dir, start_timeout)
        for pkg, (name, cfg) in wanted.items()
    ]
    results = await asyncio.gather(*jobs, return_exceptions=True)
    for (pkg, (name, config)), outcome in zip(wanted.items(), results, strict=True):
        if isinstance(outcome, BaseException):
            error = outcome if isinstance(outcome, McpServerError) else McpServerError(name, repr(outcome))
            apis.errors.append(error)
            continue
        regenerated, tools = outcome
        apis.tools.extend(tools)
        apis.params[pkg] = server_params(config)
        if regenerated:
            apis.regenerated.append(name)
            written.append(base / pkg)
        elif not ours_unedited(base / pkg):
            apis.kept.append(name)
            baked = baked_params(base / pkg)
            if baked is not None and same_server(baked, apis.params[pkg]):
                apis.params[pkg] = baked  # the kernel's calls carry these exact parameters
            elif baked is not None:
                apis.errors.append(
                    McpServerError(
                        name,
                        f"its Python API in {base / pkg} was made for other connection parameters and is "
                        "kept as it is (it may be edited); remove that directory to generate it afresh.",
                    )
                )
    await asyncio.to_thread(_note_written, root, written)
    return apis


def _note_written(root: Path, packages: list[Path]) -> None:
    """Into a project (not our data dir): the files of the packages generated now are the app's own, and
    never count as a change of what the user trusted (``trust.note_own_writes``)."""
    if root.absolute().is_relative_to(paths.data_dir().absolute()):
        return
    # ``mcptools/__init__.py`` is the app's only as the app makes it: empty (``touch`` keeps any other).
    init = root / PACKAGE / "__init__.py"
    written = [init] if init.is_file() and not init.is_symlink() and not init.stat().st_size else []
    for package in packages:
        written += [p for p in package.rglob("*") if p.is_file() and not p.is_symlink()]
    note_own_writes(written)


def _digest(config: McpServerConfig) -> str:
    return f"{_FORMAT_VERSION}:{importlib.metadata.version('mcpygen')}:{config_digest(config)}"


def _remove_unknown_packages(base: Path, keep: set[str]) -> None:
    for child in base.iterdir():
        if child.name.startswith(".staging-"):
            # Left over by a crash, unless another process is generating into it right now.
            with contextlib.suppress(OSError):
                if time.time() - child.stat().st_mtime > _STALE_STAGING_SECONDS:
                    shutil.rmtree(child, ignore_errors=True)
        elif child.is_dir() and child.name not in keep and ours_unedited(child):
            shutil.rmtree(child, ignore_errors=True)


async def _ensure_package(
    base: Path,
    pkg: str,
    name: str,
    config: McpServerConfig,
    codegen: asyncio.Lock,
    log_dir: Path | None,
    start_timeout: float | None,
) -> tuple[bool, list[PtcTool]]:
    target = base / pkg
    digest = _digest(config)
    marker = read_marker(target)
    if target.is_dir() and (marker is None or marker[0] == digest or not ours_unedited(target)):
        # Current, or freeact's / edited by hand (freeact never regenerates an existing package).
        return False, _read_package(target, pkg)
    try:
        client = await connect(name, config, log_dir, start_timeout)
        try:
            tools = await list_tools(name, client, config)
        finally:
            await close_client(client)
        async with codegen:
            await asyncio.to_thread(_write_package, base, pkg, server_params(config), tools, digest)
        # The app's own files before it reads them back for the prompt (``trusted`` reads a project's
        # generated code only as the trust check read it, or as the app wrote it).
        await asyncio.to_thread(_note_written, base.parent, [target])
    except BaseException:
        # A package generated from another config would call the server with stale parameters.
        shutil.rmtree(target, ignore_errors=True)
        raise
    return True, _read_package(target, pkg)


def _write_package(base: Path, pkg: str, params: dict[str, Any], tools: list[Tool], digest: str) -> None:
    """Generate into a staging directory, then swap it in, so a failure never leaves half a package."""
    staging = Path(tempfile.mkdtemp(prefix=f".staging-{pkg}-", dir=base))
    try:
        # datamodel-code-generator warns about its formatters on stderr, which the TUI owns.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            _generate(staging, pkg, params, tools)
        _write(staging / DIGEST_FILE, f"{digest}\n{files_hash(staging)}\n", 0o644)
        target = base / pkg
        if target.exists():
            # rename(2) may replace an empty directory, so the old package moves out in one step.
            trash = Path(tempfile.mkdtemp(prefix=f".staging-old-{pkg}-", dir=base))
            os.replace(target, trash)
        else:
            trash = None
        os.replace(staging, target)
        if trash is not None:
            shutil.rmtree(trash, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _generate(out: Path, pkg: str, params: dict[str, Any], tools: list[Tool]) -> None:
    """Write mcpygen's modules: the same code ``generate_mcp_sources`` writes, from our tool list."""
    from mcpygen.apigen import (
        generate_function_definition,
        generate_init_definition,
        generate_input_model_code,
        generate_output_model_code,
        sanitize_name,
        strip_imports,
    )

    # The init file holds the server's env and headers, which may carry tokens.
    _write(out / "__init__.py", generate_init_definition(pkg, params), 0o600)
    for tool in tools:
        code = generate_input_model_code(tool.inputSchema)
        if tool.outputSchema:
            code += "\n\n" + strip_imports(generate_output_model_code(tool.outputSchema))
        code += "\n\n" + generate_function_definition(
            original_name=tool.name,
            description=tool.description or "",
            structured_output=tool.outputSchema is not None,
        )
        _write(out / f"{sanitize_name(tool.name)}.py", code, 0o644)


def _write(path: Path, text: str, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def _read_package(target: Path, pkg: str) -> list[PtcTool]:
    tools = []
    for module in sorted(target.glob("*.py")):
        if module.name == "__init__.py":
            continue
        try:
            tools.append(_describe_module(module, pkg))
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError) as exc:  # not what the trust check read, too big, ...: said
            refusals.report(refusals.refusal_of("generated API", module, exc))
        except (SyntaxError, ValueError):
            continue  # a damaged module is left out of the listing; the model cannot use it anyway
    return tools


def _describe_module(path: Path, pkg: str) -> PtcTool:
    tree = ast.parse(trusted.read_text(path))  # a project's: only as the trust check read it (or the app wrote it)
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    run = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run")
    tool = path.stem
    for node in ast.walk(run):
        if isinstance(node, ast.keyword) and node.arg == "tool_name" and isinstance(node.value, ast.Constant):
            tool = str(node.value.value)
    params = f"Params({_fields(classes['Params'])})" if "Params" in classes else "Params()"
    result = f"Result({_fields(classes['Result'])})" if "Result" in classes else "str"
    doc = (ast.get_docstring(run) or "").strip().split("\n\n")[0].replace("\n", " ")
    if len(doc) > _SUMMARY_CHARS:
        doc = doc[: _SUMMARY_CHARS - 1] + "…"
    return PtcTool(pkg, path.stem, tool, f"run({params}) -> {result}", doc)


def _fields(cls: ast.ClassDef) -> str:
    out = []
    for stmt in cls.body:
        if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
            continue
        text = f"{stmt.target.id}: {ast.unparse(stmt.annotation)}"
        default = _default(stmt.value)
        out.append(text if default is None else f"{text} = {default}")
    return ", ".join(out)


def _default(value: ast.expr | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "Field":
        given = (
            value.args[0]
            if value.args
            else next((k.value for k in value.keywords if k.arg == "default"), None)
        )
        if given is None or (isinstance(given, ast.Constant) and given.value is Ellipsis):
            return None
        return ast.unparse(given)
    return ast.unparse(value)
