"""Which variables a trusted project's ``.env`` may not set: one table, a reason per row.

A project's ``.env`` is there for the project's own settings (a model, a key name, a flag of its
tools). It may never change where the user's keys or code go, how peers are verified, or how a
process finds and loads code (the app's, the kernel gateway's, a kernel's, a shell's, git's): those
are the user's to set, in their own environment. ``refusal(name)`` says why a name is refused: first by the
shape of the name (an internal switch, a tool family's first word, a last word that names a program or
start-up code), then by the rows of programs and libraries named one by one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class EnvRule:
    pattern: re.Pattern[str]
    reason: str


def _rule(pattern: str, reason: str) -> EnvRule:
    return EnvRule(re.compile(pattern, re.I), reason)


# The prefixes of the model providers' variables (pydantic-ai's providers and their SDKs; a test scans the
# installed SDKs and fails on a provider missing here). A provider's variable that is not its key
# (``*_KEY``, ``*_TOKEN``, ``*_SECRET``) says where its requests go or how they are made.
PROVIDER_PREFIXES: tuple[str, ...] = (
    "OPENAI", "ANTHROPIC", "GOOGLE", "GEMINI", "VERTEX", "CLOUD_ML", "GROQ", "MISTRAL", "CO", "COHERE",
    "AWS", "BEDROCK", "DEEPSEEK", "XAI", "GROK", "OPENROUTER", "TOGETHER", "FIREWORKS", "AZURE", "HEROKU",
    "GITHUB", "COPILOT", "HF", "HUGGINGFACE", "CEREBRAS", "MOONSHOTAI", "OLLAMA", "VERCEL", "LITELLM",
    "NEBIUS", "OVHCLOUD", "DASHSCOPE", "ALIBABA", "SAMBANOVA", "PYDANTIC_AI", "PAIG", "LOGFIRE", "VLLM",
    "LMSTUDIO", "CRUSOE", "ELEVENLABS", "META", "SNOWFLAKE", "SYSTEM_ONE", "TYPESAFE", "VOYAGE", "ZAI",
)  # fmt: skip
SECRET_ENV_ENDINGS: tuple[str, ...] = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "APIKEY")
"""How the name of a variable that holds a credential ends (``OPENAI_API_KEY``, ``HF_TOKEN``, ``PGPASSWORD``,
``AWS_SECRET_ACCESS_KEY``): the one table of secret-looking names. A provider's variable with one of these
endings is its key itself (``allowance``); a project may not hand one of the user's to the kernel
(``policy.project_layer``); no isolated kernel's environment holds one the user did not give it
(``tests/execution/test_sandbox_secrets.py``)."""
_KEY_ITSELF = "(" + "|".join("_" + ending for ending in SECRET_ENV_ENDINGS) + ")"


def is_secret_env(name: str) -> bool:
    """Whether ``name`` is the name of a variable that holds a credential (``SECRET_ENV_ENDINGS``)."""
    return name.upper().endswith(SECRET_ENV_ENDINGS)


# The structure of a name that configures a program rather than the project (#39, F3): the deny rows below
# name the settings of programs one by one, and each new program brought names no row had. So three rules
# decide by the shape of a name first, whatever the program:
# - a leading underscore marks an implementation's internal switch (``_PYTHON_SYSCONFIGDATA_NAME`` makes
#   every Python import the module it names; ``__PYVENV_LAUNCHER__``), never an application's setting;
# - a first word that names an interpreter, loader or tool family (``TOOL_FAMILIES``: its variables are the
#   tool's own configuration, ``GLIBC_TUNABLES``, ``LUA_INIT``, ``R_PROFILE_USER``, ``DOTNET_STARTUP_HOOKS``);
# - a last word (or a word anywhere, ``CONFIG_WORDS``) that says the value names a program, start-up code or
#   a place code and configuration are found (``RSYNC_RSH``, ``GH_PAGER``, ``KUBE_EDITOR``, ``EXINIT``,
#   ``PHP_INI_SCAN_DIR``, ``LESSKEYIN``): ``PROGRAM_ENDINGS``.
# A project's settings are names such as ``DATABASE_URL``, ``MY_SETTING``, ``OPENAI_API_KEY``: none of
# these shapes. What one of them refuses the user sets in their own environment or config.
TOOL_FAMILIES: tuple[str, ...] = (
    "LD", "DYLD", "GCONV", "VIRTUAL_ENV", "CONDA", "MAMBA", "PIXI", "POETRY", "PIPENV", "PIP", "UV",
    "JUPYTER", "JPY", "RUBY", "GEM", "BUNDLE", "LUA", "PHP", "R", "NODE", "NPM", "YARN", "PNPM", "DENO",
    "BUN", "GIT", "SSH", "CORECLR", "JAVA", "JDK", "GCC", "CLANG", "LLVM", "RSYNC", "CVS", "SVN", "HG",
    "SYSTEMD", "DEBUGINFOD", "LESS", "VIM", "NVIM", "EMACS", "KUBE", "GH", "GPG", "GNUPG", "SUDO", "TCL",
    "TK", "GUILE", "ERL", "JULIA", "GHC", "CABAL", "MAVEN", "GRADLE", "SBT", "PODMAN", "QT", "GTK", "GIO",
    "GDK", "FONTCONFIG", "PKG", "MAKE", "MAKEFILES", "MAGIC", "TEX", "OCAML", "ELIXIR", "MIX", "HEX",
)  # fmt: skip
"""First words (followed by ``_`` or nothing) of the variables of an interpreter, loader or tool."""
TOOL_PREFIXES: tuple[str, ...] = ("PYTHON", "_PYTHON", "IPYTHON", "PYENV", "PERL", "GLIBC", "MALLOC", "DOTNET", "COMPLUS")
"""Prefixes (followed by anything: ``PERL5DB``, ``MALLOC_CHECK_``) of a runtime's variables."""
PROGRAM_ENDINGS: tuple[str, ...] = (
    "RSH", "SSH", "PAGER", "EDITOR", "FCEDIT", "VISUAL", "INIT", "RC", "STARTUP", "PROFILE", "HOOK",
    "HOOKS", "PRELOAD", "PATH", "PATHS", "HOME", "DIR", "DIRS", "TUNABLES", "BROWSER", "SHELL", "KEYIN",
    "LESSKEY",
)  # fmt: skip
"""How a name ends when its value names a program, start-up code or a place code is loaded from."""
PROGRAM_WORDS: tuple[str, ...] = (
    "INTERPRETER", "LAUNCHER", "EXEC", "EXECUTABLE", "COMMAND", "CMD", "PROGRAM", "BIN", "BINARY",
)  # fmt: skip
"""Last words (after ``_``, or the whole name) that say the value is a program to run."""
CONFIG_WORDS: tuple[str, ...] = ("PROFILE", "STARTUP", "CONFIG", "ENVIRON", "TUNABLE", "HOOK", "PRELOAD")
"""Words that, anywhere in a name, say its value is configuration or code a program loads."""


def _any(words: tuple[str, ...]) -> str:
    return "(" + "|".join(words) + ")"


REFUSED_ENV: tuple[EnvRule, ...] = (
    _rule(
        r"_.*",
        "a leading underscore marks an implementation's internal switch (it can make an interpreter import "
        "other code at start), never a project's setting",
    ),
    _rule(
        rf"{_any(TOOL_FAMILIES)}(_.*)?|{_any(TOOL_PREFIXES)}.*",
        "its first word names an interpreter, loader or tool, whose variables choose what that program "
        "loads, runs or trusts",
    ),
    _rule(
        rf".*{_any(PROGRAM_ENDINGS)}|(.*_)?{_any(PROGRAM_WORDS)}",
        "its last word says it names a program, start-up code or a place code and configuration are "
        "loaded from",
    ),
    _rule(
        ".*(" + "|".join(CONFIG_WORDS) + ").*",
        "it names a configuration, profile, start-up code or hook a program loads",
    ),
    _rule(
        rf"(?!.*{_KEY_ITSELF}$)({'|'.join(PROVIDER_PREFIXES)})_.*",
        "a model provider's setting other than its key: it chooses where a key or the conversation is "
        "sent, or how (address, project, region, headers, client mode, replay files)",
    ),
    _rule(
        r"LOCALDOMAIN|RES_OPTIONS|HOSTALIASES|RESOLV_.*",
        "it changes how host names resolve, so where traffic goes",
    ),
    _rule(r"NETRC|.*_NETRC", "it chooses the file credentials are read from"),
    _rule(
        r"MPL(BACKEND|CONFIGDIR)|MATPLOTLIBRC|PYTEST_.*|COVERAGE_.*|UNITTEST_.*",
        "it makes a library or test runner import other code (a backend, plugins, a config, a hook)",
    ),
    _rule(
        r"CC|CXX|CPP|LD|AR|AS|FC|NM|RANLIB|STRIP|MAKE|MAKEFLAGS|MFLAGS|LDSHARED|RUSTC|RUSTDOC|CARGO_.*"
        r"|RUSTUP_.*|GO[A-Z]*|CGO_.*|CMAKE_.*|MESON_.*|NINJA.*|.*_WRAPPER",
        "it chooses the compiler, linker or build program that runs",
    ),
    _rule(
        r".*(OPT|OPTS|OPTIONS|FLAGS)",
        "a program reads its options from it, and options can make it load or run other code",
    ),
    _rule(
        r".*(PATH|PATHS|_LIB|_LIBS|LIB|_HOME|_PLUGINS?|_PRELOAD|_STARTUP|RC|RC_?FILE)",
        "it chooses where a program looks for code, plugins or start-up files to load",
    ),

    _rule(
        r".*(_BASE_URL|_API_BASE|_ENDPOINT|_HOST|_GATEWAY_URL|_API_URL)",
        "it chooses where keys or code are sent",
    ),
    _rule(r".*_PROXY|PROXY", "it routes the app's traffic through a proxy"),
    _rule(
        r".*(_CA_BUNDLE|_CA_CERTS?|_CERT_FILE|_CERT_DIR|_CERT|_CERTS)|SSL_CERT_.*",
        "it chooses which certificates are believed",
    ),
    _rule(
        r".*(VALIDATE_CERTS?|VERIFY|VERIFY_SSL|INSECURE|REJECT_UNAUTHORIZED|HTTPSVERIFY).*",
        "it turns off the verification of peers",
    ),
    _rule(r"SSLKEYLOGFILE", "it writes the keys of every TLS connection to a file"),
    _rule(
        r".*CREDENTIALS?(_.*)?|.*_CONFIG_(FILE|PATH)|GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES|AWS_PROFILE"
        r"|.*_ENDPOINT_.*|KUBECONFIG|DOCKER_.*|GNUPGHOME|SSH_AUTH_SOCK",
        "it chooses which credentials are used, or a program that makes them",
    ),
    _rule(
        r"GOOGLE_CLOUD_(PROJECT|LOCATION)|GCLOUD_PROJECT|CLOUDSDK_.*",
        "it chooses which cloud project requests go to and are logged in",
    ),
    _rule(
        r"OPENSSL_.*|GCONV_PATH|LOCPATH|TERMINFO(_DIRS)?|CURL_HOME|WGETRC|MANPAGER",
        "it makes a library or a tool load other code or config",
    ),
    _rule(r"(LD|DYLD)_.*", "it makes the dynamic loader load other code into every process"),
    _rule(r"PYTHON.*", "it changes how Python starts and which code it imports"),
    _rule(r"GIT_.*", "it changes git's config and the programs git runs"),
    _rule(r"(JUPYTER|JPY|KG|IPYTHON)(_.*|DIR)", "it changes how the kernel gateway and kernels start"),
    _rule(r"NODE_.*|NPM_CONFIG_.*", "it changes which code Node.js loads and what it trusts"),
    _rule(r"(PIP|UV|CONDA)_.*", "it changes where packages are installed from"),
    _rule(
        r"PERL5?(LIB|OPT)|RUBY(LIB|OPT)|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|CLASSPATH",
        "it makes a runtime load other code",
    ),
    _rule(
        r"BASH_ENV|ENV|BASH_FUNC_.*|ZDOTDIR|PROMPT_COMMAND|SHELLOPTS|BASHOPTS|IFS|PS4|CDPATH|INPUTRC",
        "it runs code in every shell",
    ),
    _rule(
        r"PATH|SHELL|EDITOR|VISUAL|PAGER|LESSOPEN|LESSCLOSE|BROWSER|.*ASKPASS",
        "it chooses the programs that run",
    ),
    _rule(
        r"HOME|XDG_.*|FREEACT_TUI_(HOME|OWNER_PID|TIMELINE)|TMPDIR|TMP|TEMP|APPDATA|LOCALAPPDATA|USERPROFILE"
        r"|ALLUSERSPROFILE|PROGRAMDATA|PUBLIC|PREFIX|ANDROID_.*",
        "it moves where this app and others keep their own files",
    ),
    # The app's own process: a project's .env never enters it (``project_env``), yet its values reach
    # ``${VAR}`` in the config and so the kernel and MCP servers, whose libraries read their settings at
    # import (Textual presses keys, loads a driver module, writes logs and screenshots, opens a devtools
    # connection). Whole families, by prefix: a library's next variable is refused before anyone names it
    # (``test_env_policy_app_scan`` scans the installed libraries).
    _rule(
        r"TEXTUAL.*|RICH_.*|PROMPT_TOOLKIT_.*|TYPER_.*|CLICK_.*|_?TYPER_.*|PY_COLORS|TERMINAL_WIDTH|COMP_.*"
        r"|WEBSOCKETS_.*|AIOHTTP_.*|TORNADO_.*|HTTPX_.*|ANYIO_.*|PSUTIL_.*|PYDANTIC_(?!AI_).*|DEFER_PYDANTIC_BUILD"
        r"|ASYNC_TEST_TIMEOUT",
        "a library of this app's own process reads it (its keys, drivers, logs, limits): a project may not "
        "change the app",
    ),
    _rule(
        r"DISPLAY|WAYLAND_.*|DBUS_.*|XAUTHORITY|TERM|TERM_.*|COLORTERM|LC_.*|LANG|LANGUAGE|TZ|TZDIR|NO_COLOR"
        r"|FORCE_COLOR|TTY_.*|UNICODE_VERSION|COLUMNS|LINES|ROWS|ESCDELAY|LESS|USER|LOGNAME"
        r"|DATABRICKS_RUNTIME_VERSION",
        "it changes this app's own terminal, desktop session, locale, time zone or user",
    ),
)


# Variables a provider SDK reads that a project may set, each with why (a test scans the installed SDKs:
# every name they read is refused above or allowed here, so a new one must be decided).
ALLOWED_ENV: dict[str, str] = {}


def allowance(name: str) -> str | None:
    """Why a project's ``.env`` may set ``name`` when ``refusal`` lets it through and it is a provider's
    (its key, or a name of ``ALLOWED_ENV``); None for any other name."""
    if refusal(name) is not None:
        return None
    if name.upper() in ALLOWED_ENV:
        return ALLOWED_ENV[name.upper()]
    if re.fullmatch(rf"({'|'.join(PROVIDER_PREFIXES)})(_.*)?{_KEY_ITSELF}", name, re.I):
        return "a provider's key itself: the project may bring its own (never sent anywhere else)"
    return None


def refusal(name: str) -> str | None:
    """Why a project's ``.env`` may not set ``name`` (None: it may)."""
    for rule in REFUSED_ENV:
        if rule.pattern.fullmatch(name):
            return rule.reason
    return None


__all__ = [
    "ALLOWED_ENV",
    "PROVIDER_PREFIXES",
    "REFUSED_ENV",
    "SECRET_ENV_ENDINGS",
    "CONFIG_WORDS",
    "PROGRAM_ENDINGS",
    "PROGRAM_WORDS",
    "TOOL_FAMILIES",
    "TOOL_PREFIXES",
    "EnvRule",
    "allowance",
    "is_secret_env",
    "refusal",
]
