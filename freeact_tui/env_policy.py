"""Which variables a trusted project's ``.env`` may not set: one table, a reason per row.

A project's ``.env`` is there for the project's own settings (a model, a key name, a flag of its
tools). It may never change where the user's keys or code go, how peers are verified, or how a
process finds and loads code (the app's, the kernel gateway's, a kernel's, a shell's, git's): those
are the user's to set, in their own environment. ``refusal(name)`` says why a name is refused.
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


REFUSED_ENV: tuple[EnvRule, ...] = (
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
    _rule(r"HOME|XDG_.*|FREEACT_TUI_(HOME|OWNER_PID|TIMELINE)|TMPDIR", "it moves where this app and others keep their own files"),
)


def refusal(name: str) -> str | None:
    """Why a project's ``.env`` may not set ``name`` (None: it may)."""
    for rule in REFUSED_ENV:
        if rule.pattern.fullmatch(name):
            return rule.reason
    return None


__all__ = ["REFUSED_ENV", "EnvRule", "refusal"]
