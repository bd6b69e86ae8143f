"""What a project file may set, even once its folder is trusted (used by ``config.load_config``).

A trusted project still may not set any key of ``PROJECT_REFUSED`` (one table, a reason per row:
``skip_permissions``, which key is sent or where the conversation goes, where the app keeps its own
state, what runs as the kernel, the keymap), set a place the app writes to (``PROJECT_INSIDE``:
``images_dir``) outside its own folder, move code out of the user's sandbox, or read ``${VAR}``
anywhere but ``kernel_env`` (and there only the names its own ``.env`` sets, never the user's
environment: ``env_refs``); its ``.env`` may not set variables that redirect providers or this app's own
files; and it may hold no allow rule the app's own "broad" check calls broad (``project_rule_refusal``:
``code:*``, any code allow, ``shell:*``, ``*``, ``bash *`` …), so a project can never switch approvals off,
nor one that reaches past its own ordinary files (``project_path_refusal``: outside the folder, secrets,
protected or code-configuring names, the code-action tool). Each refusal is named in a notice (file and
key) or under "Never applied" in the trust dialog.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from freeact_tui.project import env_refs, paths, trusted
from freeact_tui.project.env_policy import refusal
from freeact_tui.reach.breadth import PATH_PREFIX, broad_allow, broad_reason, unread_program
from freeact_tui.reach.resolve import real_path, resolve, subject, within
from freeact_tui.shell.gitreads import is_secret_name
from freeact_tui.toolcalls import CODE_TOOL

_VAR_REF = re.compile(r"\$\{")
# The one decision per setting of ``config.Config``: what a (trusted) project file may set, and what it
# may not, each with its reason (``tests/project/test_project_settings_table.py`` checks every field is in one
# of the two, so a new setting must be decided here). A project may not choose where the app reads or
# writes its own state, where keys or the conversation go, what runs as the kernel, or what the user's
# keys do: each of those would let a cloned repository act for the user.
PROJECT_REFUSED: dict[str, str] = {
    "skip_permissions": "a project may not turn off approvals",
    "api_key_env": "a project may not choose which key is sent",
    "remote_url": "a project may not choose where code and the gateway token go",
    "remote_insecure": "a project may not turn off the gateway's certificate check",
    "sessions_dir": (
        "a project may not move the session store (a session planted there would be resumed, "
        "unseen by the trust check)"
    ),
    "working_dir": "a project may not send the agent to another folder (its trust would be recorded unseen)",
    "docker_image": "a project may not choose what runs as the kernel (it would run code without approval)",
    "keymap": "a project may not change what your keys do (approval dialogs included)",
    "project_kernel_env": "a project may not choose which of its variables reach the kernel's programs",
}
# What a project may set, and why that is only the project's own business.
PROJECT_ALLOWED: dict[str, str] = {
    "model": "which provider model answers (the provider's own address, the user's own key)",
    "base_url": (
        "the model server of the project (freeact keeps it in the project's config), shown when trusting; "
        "dropped when the user's own key would be sent there (``limit_layers``)"
    ),
    "model_settings": "how the model samples and thinks, only the keys of ``PROJECT_MODEL_SETTINGS``",
    "system_prompt": "instructions to the model, like AGENTS.md (listed when trusting)",
    "action_protocol": "how the model writes actions; each is still approved",
    "tool_discovery": "which tool-listing helpers the model gets",
    "max_steps_without_progress": "when a turn gives up",
    "max_failing_steps": "when a turn gives up",
    "max_steps_of_one_shape": "when a turn gives up",
    "execution": "only within the user's isolation (``limit_layers``: never out of a sandbox, never remote)",
    "execution_timeout": "how long an approved action may run",
    "model_idle_timeout": "how long a stalled model request is waited for",
    "approval_timeout": "how long an approval waits before it counts as refused",
    "kernel_env": (
        "variables for the kernel, never one ``env_policy`` refuses, and only those the user's own "
        "``project_kernel_env`` names (``limit_layers``)"
    ),
    "tool_result_inline_max_bytes": "how much of a tool result is shown inline",
    "tool_result_preview_chars": "how much of a tool result is previewed",
    "context_window": "the model's window size",
    "compact_threshold": "when the conversation is compacted",
    "trim_result_chars": "how much of an old tool result is sent again",
    "enable_subagents": "whether the model may start subagents (their actions are approved too)",
    "max_subagents": "how many subagents at once",
    "subagent_pool_size": "how many spare kernels are kept",
    "checkpoints": "whether the project's own files get undo checkpoints",
    "checkpoint_max_file_bytes": "the size of a project file kept for undo",
    "checkpoint_max_binary_bytes": "the size of a binary project file kept for undo",
    "checkpoint_max_files": "how many project files are kept for undo",
    "theme": "colours, from the app's own themes",
    "notify_bell": "whether a bell rings",
    "notify_desktop": "whether a desktop notification is sent",
    "notify_after": "when a long turn is notified",
    "mcp_servers": "servers listed when trusting, started only after it, never reading ${VAR} to launch",
    "images_dir": (
        "where images of the output are saved (freeact keeps it in the project's config), only inside the "
        "project's own folder (``PROJECT_INSIDE``)"
    ),
}
PROJECT_MODEL_SETTINGS: dict[str, str] = {
    "temperature": "sampling",
    "top_p": "sampling",
    "top_k": "sampling",
    "seed": "sampling",
    "presence_penalty": "sampling",
    "frequency_penalty": "sampling",
    "logit_bias": "sampling",
    "stop_sequences": "where an answer stops",
    "max_tokens": "how long an answer may be",
    "parallel_tool_calls": "whether tools are called in parallel",
    "thinking": "how much the model thinks",
    "google_thinking_config": "how much the model thinks (freeact writes it by default)",
    "anthropic_thinking": "how much the model thinks",
    "openai_reasoning_effort": "how much the model thinks",
}
"""The keys of ``model_settings`` a project may set: how the model samples and thinks. Every other key
(``extra_headers``, ``extra_body``, ``*_store``, ``*_metadata``, a key this table does not know) reaches
the provider request as headers or body fields: a project may not choose what is sent, with which key
or where it is kept, so each is refused and named (#39). The user's own config may set any of them."""
PROJECT_INSIDE: frozenset[str] = frozenset({"images_dir"})
"""The settings of ``PROJECT_ALLOWED`` that name a place the app writes to: a project may set one only to a
path that leads, through every symlink (``reach.resolve``, the one path resolver), inside its own folder
and into none of the names that configure git or the app (``paths.PROTECTED_NAMES``); any other value is
refused and named."""
# Rule kinds whose calls run programs: a project's path rule for them would allow any program by its paths.
_RUNS_PROGRAMS = frozenset({"shell", "script", "code", "*"})
# Isolation a project may not weaken (the user's sandbox stays a sandbox).
_ISOLATED = ("sandbox", "docker")


def project_rule_refusal(effect: str, kind: str, pattern: str) -> str | None:
    """Why a project file may not hold the rule ``effect kind: pattern``, or ``None`` when it may.

    The one bound on a trusted project's rules (``permissions`` skips a refused rule, the trust dialog
    names it under "Never applied"): an allow rule the app's own "broad" check calls broad, and a shell
    allow rule for any program outside the app's read-only table (``breadth.unread_program``): a build,
    test or run command does what files the agent may write say (#39). Ask rules only ask more; a
    project has no deny rules. The user's own rules are not bounded by this.
    """
    if effect != "allow":
        return None
    if broad_allow(kind, pattern):
        return "any code may follow what it names; a project may not allow code"
    reason = broad_reason(kind, pattern, strict=True)
    if reason:
        return f"{reason}; a project may not allow that much"
    if kind in _RUNS_PROGRAMS and pattern.strip().startswith(PATH_PREFIX):
        return "a path rule would allow any program that names the path; a project may allow only reads"
    if kind == "shell" and (unread := unread_program(pattern)) is not None:
        return f"{unread}; a project may allow only what the app's read-only table allows"
    if kind in ("tool", "mcp") and fnmatchcase(CODE_TOOL, pattern.strip()):
        return f"{CODE_TOOL} runs code actions; a project may not allow code"
    if pattern.strip().startswith(PATH_PREFIX):
        why = project_path_refusal(pattern.strip()[len(PATH_PREFIX) :].strip())
        return f"{why}; a project's rules may allow only its own ordinary files" if why else None
    return None


def project_path_refusal(path: str) -> str | None:
    """Why a project's allow rule may not allow ``path`` (a path as rules see it: relative inside the working
    folder, absolute outside it, resolved through every symlink by ``reach``; or a rule's glob), or ``None``.

    The one bound on what a trusted project's rules reach (#39), judged per rule when the rules are read
    (``project_rule_refusal``: the rule is never applied, and named under "Never applied") and per path when
    one matches (``permissions.match``: a glob such as ``**/x`` never matches a path the bound refuses): only
    the project's own files, and none that holds secrets (``gitreads.SECRET_NAMES``), configures git or this
    app (``paths.PROTECTED_NAMES``) or configures code that runs later (``paths.CONFIGURES_CODE``).
    """
    text = path.strip()
    if text.startswith(("/", "~")):
        return "it reaches outside the project folder"
    parts = [part for part in text.split("/") if part not in ("", ".")]
    if ".." in parts:
        return "it climbs out of the project folder (..)"
    if is_secret_name(text):
        return "it names files that hold secrets (they are always asked for)"
    named = paths.controlling_part(parts)  # compared as a file system may (``.GIT``, ``Pytest.INI``)
    if named is not None:
        return f"it names {named}, which configures git, this app or code that runs later"
    return None


def refuse_var_refs(values: Any, where: str, path: str, notices: list[str]) -> Any:
    """``values`` without any string holding a ``${VAR}`` reference (each named in ``notices``)."""
    if isinstance(values, str):
        if _VAR_REF.search(values):
            notices.append(
                f"{where}: `{path}` is ignored: a project file may not read environment variables "
                "(${…}) outside kernel_env; set it in your user config or with --config."
            )
            return None
        return values
    if isinstance(values, dict):
        out: dict[str, Any] = {}
        for key, value in values.items():
            kept = refuse_var_refs(value, where, f"{path}.{key}" if path else str(key), notices)
            if kept is not None:
                out[key] = kept
        return out
    if isinstance(values, list):
        items = [refuse_var_refs(v, where, f"{path}[{i}]", notices) for i, v in enumerate(values)]
        return [v for v in items if v is not None]
    return values


def project_root(where: str) -> Path:
    """The folder of the project whose file is ``where`` (``.freeact/config.toml``'s is above ``.freeact``)."""
    parent = Path(where).parent
    return parent.parent if parent.name == paths.FREEACT_DIR_NAME else parent


def outside_refusal(value: object, root: Path) -> tuple[str | None, str]:
    """Why the place ``value`` (relative: to ``root``) may not be a project's choice, or ``None``; and
    where it really leads (every symlink followed)."""
    if not isinstance(value, str | Path) or not str(value):
        return None, str(value)  # not a path: the config's own validation says so
    home = real_path(str(root)).path
    leads = resolve(str(value), root)
    if not leads.certain:
        return "it passes through a symlink loop or too long a chain", leads.path
    if not within(leads.path, home):
        return f"it leads outside the project folder {home}", leads.path
    parts = subject(leads.path, home).split("/")
    if protected := next((part for part in parts if paths.is_protected(part)), None):
        return f"it leads into {protected}, which configures git or this app", leads.path
    return None, leads.path


def _bound_inside(out: dict[str, Any], where: str, notices: list[str]) -> None:
    """Keep each ``PROJECT_INSIDE`` setting of ``out`` only where it leads inside the project (as the path it
    leads to: a symlink changed later cannot move it), naming each refused one."""
    for key in sorted(PROJECT_INSIDE & out.keys()):
        why, leads = outside_refusal(out[key], project_root(where))
        if why is None:
            out[key] = leads
            continue
        notices.append(
            f"{where}: `{key} = {str(out.pop(key))!r}` is ignored ({why}: a project may choose it only inside "
            "its own folder); set it in your user config or on the command line."
        )


def _bound_model_settings(out: dict[str, Any], where: str, notices: list[str]) -> None:
    """Keep only the ``model_settings`` keys of ``PROJECT_MODEL_SETTINGS``, naming each refused one."""
    settings = out.get("model_settings")
    if not isinstance(settings, dict):
        return  # absent, or not a table: the config's own validation says so
    kept: dict[str, Any] = {}
    for key, value in settings.items():
        if key in PROJECT_MODEL_SETTINGS:
            kept[key] = value
        else:
            notices.append(
                f"{where}: `model_settings.{key}` is ignored (a project may set only how the model samples "
                f"and thinks: {', '.join(PROJECT_MODEL_SETTINGS)}; anything else reaches the provider "
                "request); set it in your user config or with --config."
            )
    out["model_settings"] = kept


def project_layer(
    data: dict[str, Any], where: str, notices: list[str], own_env: Mapping[str, str | None] | None = None
) -> dict[str, Any]:
    """What a (trusted) project file may set: ``data`` without the keys no project may hold, ``kernel_env``'s
    ``${NAME}`` resolved among the project's own ``.env`` values (``own_env``) and never the user's
    environment (``env_refs``)."""
    out = dict(data)
    _bound_inside(out, where, notices)
    _bound_model_settings(out, where, notices)
    freeact = Path(where).parent.name == paths.FREEACT_DIR_NAME
    for key, why in PROJECT_REFUSED.items():
        if key in out:
            value = out.pop(key)
            # freeact spells a key reference `api_key = "${VAR}"`: name it as the file does.
            shown = (
                f'[agent.provider_settings] api_key = "${{{value}}}"'
                if freeact and key == "api_key_env"
                else f"{key} = {value!r}"
            )
            notices.append(
                f"{where}: `{shown}` is ignored ({why}); set it in your user config or on the command line."
            )
    servers = out.get("mcp_servers")
    if isinstance(servers, dict):
        kept_servers: dict[str, Any] = {}
        for name, spec in servers.items():
            if not isinstance(spec, dict):
                kept_servers[name] = spec
                continue
            launch = {k: spec[k] for k in ("command", "args", "url") if k in spec}
            if refuse_var_refs(launch, where, f"mcp_servers.{name}", []) != launch:
                notices.append(
                    f"{where}: MCP server {name!r} is not started: its command, args or url reads an "
                    "environment variable (${…}), which a project file may not do."
                )
                continue
            kept_servers[name] = refuse_var_refs(spec, where, f"mcp_servers.{name}", notices)
        out["mcp_servers"] = kept_servers
    kernel_env = out.pop("kernel_env", None)
    servers = out.pop("mcp_servers", None)
    out = refuse_var_refs(out, where, "", notices)
    if servers is not None:
        out["mcp_servers"] = servers
    if isinstance(kernel_env, dict):
        # freeact's documented way to hand a variable to the kernel; never one a project's .env may not
        # set (PATH, LD_PRELOAD, PYTHONPATH, GIT_*, …: the same table, the same reasons)
        kept_env: dict[str, Any] = {}
        for name, value in kernel_env.items():
            found = env_refs.resolve(value, own_env or {}) if isinstance(value, str) else None
            foreign = env_refs.refusal(found.foreign) if found is not None and found.foreign else None
            if (reason := refusal(str(name)) or foreign) is not None:
                advice = "; set it in your user config or with --config if you mean it" if foreign else ""
                notices.append(f"{where}: kernel_env.{name} is not applied: {reason}{advice}.")
            else:
                kept_env[name] = found.value if found is not None else value
        out["kernel_env"] = kept_env
    elif kernel_env is not None:
        out["kernel_env"] = kernel_env  # not a table: the config's own validation says so
    return out


def project_env(path: Path, notices: list[str]) -> dict[str, str | None]:
    """The variables a trusted project's ``.env`` may set: never one ``env_policy`` refuses, never one
    reading the user's environment (``env_refs``); each refused one is named in ``notices``. These are
    the project's own values, the only ones its other files' ``${NAME}`` may name."""
    try:
        raw = trusted.read_env(path)
    except (OSError, UnicodeDecodeError) as exc:
        notices.append(f"{path} is not read: {exc}")
        return {}
    values, reading = env_refs.resolve_env_file(raw)
    refused = {name: reason for name in raw if (reason := refusal(name) or reading.get(name)) is not None}
    for name, reason in sorted(refused.items()):
        notices.append(
            f"{path}: {name} is ignored: {reason}; a project's .env may not set it (set it in your own "
            "environment if you mean it)."
        )
    return {name: value for name, value in values.items() if name not in refused}



def limit_layers(
    layers: list[tuple[str, dict[str, Any]]],
    *,
    user_key: str | None,
    user_execution: Any,
    notices: list[str],
    kernel_names: Collection[str] = (),
) -> None:
    """Take out of the project ``layers`` what depends on the user's own settings: a ``base_url`` when
    the user's key (``user_key``) would be sent there, an ``execution`` that leaves the user's sandbox, a
    ``kernel_env`` variable the user's own ``project_kernel_env`` does not name (``kernel_names``)."""
    for source, layer in layers:
        bound_kernel_names(source, layer, kernel_names, notices)
        if user_key and "base_url" in layer:
            notices.append(
                f"{source}: `base_url = {layer.pop('base_url')!r}` is ignored: your key ({user_key}) would be "
                "sent there; set base_url in your user config or with --base-url."
            )
        execution = layer.get("execution")
        if "execution" in layer and (
            execution == "remote" or (user_execution in _ISOLATED and execution not in _ISOLATED)
        ):
            notices.append(
                f"{source}: `execution = {layer.pop('execution')!r}` is ignored: a project may not move "
                "code out of the sandbox you chose or to a remote gateway."
            )


def bound_kernel_names(source: str, layer: dict[str, Any], allowed: Collection[str], notices: list[str]) -> None:
    """Keep of the project ``layer``'s ``kernel_env`` only the names the user's own config lets a project hand
    to the kernel (``project_kernel_env``), naming each other one.

    An allow-list by structure (#39): a variable the kernel holds reaches every program it runs (``!make``,
    ``!rsync``, ``!lua``, ``less``), and which names configure which program (``MAKEFILES``, ``RSYNC_RSH``,
    ``LUA_INIT``, ``LESSKEY``, ``POSIXLY_CORRECT``, …) no table can list; so the project's names reach the
    kernel only where the user named them, after ``env_policy``'s refusals, which stay whatever is named."""
    kernel_env = layer.get("kernel_env")
    if not isinstance(kernel_env, dict):
        return  # absent, or not a table: the config's own validation says so
    for name in [n for n in kernel_env if n not in allowed]:
        del kernel_env[name]
        notices.append(
            f"{source}: kernel_env.{name} is not applied: a project hands the kernel only the variables your own "
            f'config names (add `project_kernel_env = ["{name}"]` to your user config if you mean it).'
        )
    if not kernel_env:
        layer.pop("kernel_env")  # nothing left: the project sets no variable at all
