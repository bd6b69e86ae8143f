#!/usr/bin/env python3
"""Move freeact_tui's modules (and the tests) into packages by subsystem, from ONE table (issue #41).

Run from anywhere inside the repository, on a clean tree: ``python tools/restructure.py``. It

1. ``git mv``s every module of ``MOVES`` (with its sibling files of the same stem, e.g. ``.tcss``,
   and a test module's snapshot folder ``__snapshots__/<module>/``), creating each new package's
   ``__init__.py`` with the docstring of ``PACKAGES``;
2. rewrites every reference in ``freeact_tui/``, ``tests/``, ``bench/``, ``docs/``, ``tools/``,
   ``.ci/``, ``pyproject.toml``, ``config.example.toml`` and the repository's ``*.md`` (not
   ``CHANGELOG.md``): dotted names (imports, monkeypatch targets, ``python -m`` strings, logger names),
   ``from <parent> import <module>`` lines, and path mentions (``freeact_tui/x.py``, ``execution/x.py``,
   ``tests/test_x.py``). Names are matched whole: ``freeact_tui.paths`` never rewrites
   ``freeact_tui.pathsomething``, and a name already moved is not moved again;
3. fixes ``Path(__file__)`` ancestors in moved files (a module one folder deeper reaches the same
   folder with one more ``parent``);
4. writes the import-linter layers contract (``LAYERS``) into ``pyproject.toml``;
5. runs ``ruff check --fix --select I`` on the files it touched.

Idempotent: a second run finds nothing to move and nothing to rewrite. Standard library only.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
import tokenize
from collections.abc import Iterable
from pathlib import Path

# ---------------------------------------------------------------------------------------------------
# THE table: old dotted module -> new dotted module. Everything below is derived from it.
# ---------------------------------------------------------------------------------------------------
MOVES: dict[str, str] = {
    # permission rules: what a rule matches and how it is saved
    "freeact_tui.permissions": "freeact_tui.permissions.rules",
    "freeact_tui.rulematch": "freeact_tui.permissions.match",
    "freeact_tui.rulepatterns": "freeact_tui.permissions.patterns",
    "freeact_tui.cellrules": "freeact_tui.permissions.cells",
    # how far a path word, a search or a rule pattern reaches (below effects and project: both use it)
    "freeact_tui.pathresolve": "freeact_tui.reach.resolve",
    "freeact_tui.pathglobs": "freeact_tui.reach.globs",
    "freeact_tui.pathreach": "freeact_tui.reach.named_paths",
    "freeact_tui.searchreach": "freeact_tui.reach.search",
    "freeact_tui.rulebreadth": "freeact_tui.reach.breadth",
    # shell parsing: words, programs, their options, what git reads
    "freeact_tui.shellwords": "freeact_tui.shell.words",
    "freeact_tui.shellprograms": "freeact_tui.shell.programs",
    "freeact_tui.programoptions": "freeact_tui.shell.options",
    "freeact_tui.gitreads": "freeact_tui.shell.gitreads",
    # the project: user dirs, config and its sources, trust, a freeact project, skills
    "freeact_tui.paths": "freeact_tui.project.paths",
    "freeact_tui.config": "freeact_tui.project.config",
    "freeact_tui.config_sources": "freeact_tui.project.sources",
    "freeact_tui.freeact_project": "freeact_tui.project.freeact_dir",
    "freeact_tui.project_policy": "freeact_tui.project.policy",
    "freeact_tui.project_review": "freeact_tui.project.review",
    "freeact_tui.env_policy": "freeact_tui.project.env_policy",
    "freeact_tui.trust": "freeact_tui.project.trust",
    "freeact_tui.skills": "freeact_tui.project.skills",
    "freeact_tui.ownwrites": "freeact_tui.project.own_writes",  # on branch trust3
    "freeact_tui.projectfiles": "freeact_tui.project.files",  # on branch trust3
    # text safety: what is shown is what is there
    "freeact_tui.textsafe": "freeact_tui.text.safe",
    "freeact_tui.userwords": "freeact_tui.text.userwords",
    "freeact_tui.codeshow": "freeact_tui.text.codeshow",
    # checkpoints: the engine (shadow git), the records, and the facade the agent and the TUI call
    "freeact_tui.agent.checkpointing": "freeact_tui.checkpoints.checkpointing",
    "freeact_tui.agent.checkpoint_plans": "freeact_tui.checkpoints.plans",
    "freeact_tui.agent.action_log": "freeact_tui.checkpoints.action_log",
    "freeact_tui.agent.model_notes": "freeact_tui.checkpoints.model_notes",
    "freeact_tui.execution.action_checkpoints": "freeact_tui.checkpoints.actions",
    "freeact_tui.execution.checkpoints": "freeact_tui.checkpoints.engine",
    "freeact_tui.execution.checkpoint_housekeeping": "freeact_tui.checkpoints.housekeeping",
    "freeact_tui.execution.checkpoint_limits": "freeact_tui.checkpoints.limits",
    "freeact_tui.execution.checkpoint_records": "freeact_tui.checkpoints.records",
    "freeact_tui.execution.checkpoint_restore": "freeact_tui.checkpoints.restore",
    "freeact_tui.execution.shadow_git": "freeact_tui.checkpoints.shadow_git",
    # execution: the local kernel and its gateway process
    "freeact_tui.execution.kernel": "freeact_tui.execution.kernel.executor",
    "freeact_tui.execution.kernel_client": "freeact_tui.execution.kernel.client",
    "freeact_tui.execution.kernel_gateway": "freeact_tui.execution.kernel.gateway_process",
    "freeact_tui.execution.kernel_init": "freeact_tui.execution.kernel.init_code",
    "freeact_tui.execution.kernel_venv": "freeact_tui.execution.kernel.venv",
    "freeact_tui.execution.cell_run": "freeact_tui.execution.kernel.cell_run",
    "freeact_tui.execution.background": "freeact_tui.execution.kernel.background",
    "freeact_tui.execution.state_relay": "freeact_tui.execution.kernel.state_relay",
    "freeact_tui.execution.spare_gateway": "freeact_tui.execution.kernel.spare_gateway",
    "freeact_tui.execution.pool": "freeact_tui.execution.kernel.pool",
    # execution: a remote Jupyter (Enterprise) Gateway
    "freeact_tui.execution.remote": "freeact_tui.execution.gateway.remote",
    "freeact_tui.execution.gateway_endpoint": "freeact_tui.execution.gateway.endpoint",
    "freeact_tui.execution.inband": "freeact_tui.execution.gateway.inband",
    # execution: isolation (bubblewrap sandbox, docker)
    "freeact_tui.execution.sandbox": "freeact_tui.execution.isolation.sandbox",
    "freeact_tui.execution.sandbox_bridge": "freeact_tui.execution.isolation.bridge",
    "freeact_tui.execution.sandbox_protect": "freeact_tui.execution.isolation.protect",
    "freeact_tui.execution.docker": "freeact_tui.execution.isolation.docker",
    "freeact_tui.execution.docker_image": "freeact_tui.execution.isolation.docker_image",
    # execution: the tool server the kernel calls MCP tools through
    "freeact_tui.execution.tool_server": "freeact_tui.execution.tools.server",
    "freeact_tui.execution.tool_link": "freeact_tui.execution.tools.link",
    "freeact_tui.execution.tool_allowlist": "freeact_tui.execution.tools.allowlist",
    "freeact_tui.execution.mcp_session": "freeact_tui.execution.tools.mcp_session",
    # tests: fast tier, acp
    "tests.test_acp_call_words": "tests.fast.acp.test_acp_call_words",
    "tests.test_acp_replay_words": "tests.fast.acp.test_acp_replay_words",
    # tests: fast tier, agent
    "tests.test_agent_settings": "tests.fast.agent.test_agent_settings",
    "tests.test_cancelled_requests": "tests.fast.agent.test_cancelled_requests",
    "tests.test_code_identity": "tests.fast.agent.test_code_identity",
    "tests.test_error_identity": "tests.fast.agent.test_error_identity",
    "tests.test_history_cost": "tests.fast.agent.test_history_cost",
    "tests.test_models": "tests.fast.agent.test_models",
    "tests.test_prompt_cache_order": "tests.fast.agent.test_prompt_cache_order",
    "tests.test_prompts": "tests.fast.agent.test_prompts",
    "tests.test_pydantic_private": "tests.fast.agent.test_pydantic_private",
    "tests.test_reply_policy": "tests.fast.agent.test_reply_policy",
    "tests.test_said": "tests.fast.agent.test_said",
    "tests.test_usage_restore": "tests.fast.agent.test_usage_restore",
    # tests: fast tier, cli
    "tests.test_store_cli": "tests.fast.cli.test_store_cli",
    # tests: fast tier, effects
    "tests.test_effects": "tests.fast.effects.test_effects",
    # tests: fast tier, permissions
    "tests.test_refusal_suggestions": "tests.fast.permissions.test_refusal_suggestions",
    "tests.test_rulepatterns": "tests.fast.permissions.test_rulepatterns",
    "tests.test_unwrap_rules": "tests.fast.permissions.test_unwrap_rules",
    # tests: fast tier, project
    "tests.test_config": "tests.fast.project.test_config",
    "tests.test_history": "tests.fast.project.test_history",
    "tests.test_trust_snapshots": "tests.fast.project.test_trust_snapshots",
    # tests: fast tier, reach
    "tests.test_pattern_breadth": "tests.fast.reach.test_pattern_breadth",
    # tests: fast tier, repo
    "tests.test_restructure": "tests.fast.repo.test_restructure",
    # tests: added on other branches of this round (a row whose file is absent is skipped)
    "tests.test_stream_linear": "tests.fast.agent.test_stream_linear",
    "tests.test_stream_splits": "tests.fast.agent.test_stream_splits",
    "tests.test_trust_own_writes": "tests.fast.project.test_trust_own_writes",
    "tests.test_model_failures": "tests.agent.test_model_failures",
    "tests.test_progress_budget": "tests.agent.test_progress_budget",
    "tests.test_effects_ambient": "tests.effects.test_effects_ambient",
    "tests.test_effects_kernel": "tests.effects.test_effects_kernel",
    "tests.test_project_file_kinds": "tests.project.test_project_file_kinds",
    "tests.test_bench_approval_modes": "tests.repo.test_bench_approval_modes",
    # tests: added after the table was written
    "tests.test_actions_cap": "tests.agent.test_actions_cap",
    "tests.test_reply_stops": "tests.agent.test_reply_stops",
    "tests.test_reply_stops_tui": "tests.tui.test_reply_stops_tui",
    "tests.test_kernel_message_order": "tests.fast.execution.test_kernel_message_order",
    # tests: fast tier, shell
    "tests.test_shellprograms": "tests.fast.shell.test_shellprograms",
    # tests: fast tier, store
    "tests.test_compaction": "tests.fast.store.test_compaction",
    "tests.test_decision_record": "tests.fast.store.test_decision_record",
    "tests.test_event_records": "tests.fast.store.test_event_records",
    "tests.test_prompt_record": "tests.fast.store.test_prompt_record",
    "tests.test_rewind_history": "tests.fast.store.test_rewind_history",
    "tests.test_sessions_index_file": "tests.fast.store.test_sessions_index_file",
    "tests.test_store_compat": "tests.fast.store.test_store_compat",
    "tests.test_store_index": "tests.fast.store.test_store_index",
    "tests.test_store_sessions": "tests.fast.store.test_store_sessions",
    # tests: fast tier, text
    "tests.test_visible_table": "tests.fast.text.test_visible_table",
    # tests: fast tier, tui
    "tests.test_attachments_split": "tests.fast.tui.test_attachments_split",
    "tests.test_commands": "tests.fast.tui.test_commands",
    "tests.test_completion": "tests.fast.tui.test_completion",
    "tests.test_layout_tracking": "tests.fast.tui.test_layout_tracking",
    "tests.test_markdown_literal": "tests.fast.tui.test_markdown_literal",
    "tests.test_permissions_screen": "tests.fast.tui.test_permissions_screen",
    "tests.test_themes": "tests.fast.tui.test_themes",
    "tests.test_tui_approval_controller": "tests.fast.tui.test_tui_approval_controller",
    "tests.test_tui_context": "tests.fast.tui.test_tui_context",
    "tests.test_tui_image": "tests.fast.tui.test_tui_image",
    "tests.test_tui_panel": "tests.fast.tui.test_tui_panel",
    "tests.test_tui_screens": "tests.fast.tui.test_tui_screens",
    "tests.test_tui_widgets": "tests.fast.tui.test_tui_widgets",
    # tests: acp
    "tests.test_acp": "tests.acp.test_acp",
    "tests.test_acp_editor": "tests.acp.test_acp_editor",
    "tests.test_acp_editor_paging": "tests.acp.test_acp_editor_paging",
    "tests.test_acp_faults": "tests.acp.test_acp_faults",
    "tests.test_acp_handshake": "tests.acp.test_acp_handshake",
    "tests.test_acp_load": "tests.acp.test_acp_load",
    "tests.test_acp_load_images": "tests.acp.test_acp_load_images",
    "tests.test_acp_plain": "tests.acp.test_acp_plain",
    "tests.test_acp_plan": "tests.acp.test_acp_plan",
    "tests.test_acp_sessions": "tests.acp.test_acp_sessions",
    "tests.test_acp_turn_end": "tests.acp.test_acp_turn_end",
    "tests.test_acp_typescript": "tests.acp.test_acp_typescript",
    # tests: actions
    "tests.test_code_images": "tests.actions.test_code_images",
    "tests.test_file_tools": "tests.actions.test_file_tools",
    "tests.test_file_tools_patterns": "tests.actions.test_file_tools_patterns",
    # tests: agent
    "tests.test_agent_core": "tests.agent.test_agent_core",
    "tests.test_context_trim": "tests.agent.test_context_trim",
    "tests.test_model_faults": "tests.agent.test_model_faults",
    "tests.test_progress_bound": "tests.agent.test_progress_bound",
    "tests.test_reset_tool": "tests.agent.test_reset_tool",
    "tests.test_small_models": "tests.agent.test_small_models",
    "tests.test_subagents": "tests.agent.test_subagents",
    "tests.test_text_protocol": "tests.agent.test_text_protocol",
    "tests.test_turn_limits": "tests.agent.test_turn_limits",
    # tests: checkpoints
    "tests.test_checkpoint_housekeeping": "tests.checkpoints.test_checkpoint_housekeeping",
    "tests.test_checkpointing": "tests.checkpoints.test_checkpointing",
    "tests.test_checkpoints": "tests.checkpoints.test_checkpoints",
    # tests: cli
    "tests.test_cli": "tests.cli.test_cli",
    "tests.test_headless": "tests.cli.test_headless",
    "tests.test_hostile_repo_run_output": "tests.cli.test_hostile_repo_run_output",
    "tests.test_kill_sessions": "tests.cli.test_kill_sessions",
    "tests.test_launch_overlap": "tests.cli.test_launch_overlap",
    "tests.test_launch_timeline": "tests.cli.test_launch_timeline",
    "tests.test_lifecycle_launch": "tests.cli.test_lifecycle_launch",
    "tests.test_lifecycle_restart": "tests.cli.test_lifecycle_restart",
    "tests.test_lifecycle_startup": "tests.cli.test_lifecycle_startup",
    "tests.test_progress_cli": "tests.cli.test_progress_cli",
    "tests.test_prompt_arguments": "tests.cli.test_prompt_arguments",
    "tests.test_quick_launch": "tests.cli.test_quick_launch",
    "tests.test_quit": "tests.cli.test_quit",
    "tests.test_resume_launch": "tests.cli.test_resume_launch",
    "tests.test_sessions_list_config": "tests.cli.test_sessions_list_config",
    "tests.test_sessions_list_quick": "tests.cli.test_sessions_list_quick",
    "tests.test_text_protocol_cli": "tests.cli.test_text_protocol_cli",
    "tests.test_trust_cli": "tests.cli.test_trust_cli",
    # tests: core
    "tests.test_gitrun": "tests.core.test_gitrun",
    "tests.test_typeahead": "tests.core.test_typeahead",
    # tests: effects
    "tests.test_effects_sandbox": "tests.effects.test_effects_sandbox",
    "tests.test_tui_effects": "tests.effects.test_tui_effects",
    # tests: execution
    "tests.test_cancel_while_kernel_starts": "tests.execution.test_cancel_while_kernel_starts",
    "tests.test_deferred_imports": "tests.execution.test_deferred_imports",
    "tests.test_docker": "tests.execution.test_docker",
    "tests.test_enterprise_gateway_docker": "tests.execution.test_enterprise_gateway_docker",
    "tests.test_hostile_repo_exec": "tests.execution.test_hostile_repo_exec",
    "tests.test_kernel_cwd_git": "tests.execution.test_kernel_cwd_git",
    "tests.test_kernel_executor": "tests.execution.test_kernel_executor",
    "tests.test_kernel_faults": "tests.execution.test_kernel_faults",
    "tests.test_kernel_launch": "tests.execution.test_kernel_launch",
    "tests.test_kernel_launcher": "tests.execution.test_kernel_launcher",
    "tests.test_kernel_pip": "tests.execution.test_kernel_pip",
    "tests.test_kernel_startup_retry": "tests.execution.test_kernel_startup_retry",
    "tests.test_lifecycle": "tests.execution.test_lifecycle",
    "tests.test_remote": "tests.execution.test_remote",
    "tests.test_remote_gateway": "tests.execution.test_remote_gateway",
    "tests.test_sandbox": "tests.execution.test_sandbox",
    "tests.test_sandbox_protect": "tests.execution.test_sandbox_protect",
    "tests.test_spare_gateway": "tests.execution.test_spare_gateway",
    "tests.test_tool_server": "tests.execution.test_tool_server",
    "tests.test_tui_inline_limit": "tests.execution.test_tui_inline_limit",
    # tests: freeact
    "tests.test_compat": "tests.freeact.test_compat",
    "tests.test_freeact_event_records": "tests.freeact.test_freeact_event_records",
    "tests.test_freeact_interop": "tests.freeact.test_freeact_interop",
    "tests.test_freeact_rules": "tests.freeact.test_freeact_rules",
    "tests.test_freeact_sdk": "tests.freeact.test_freeact_sdk",
    "tests.test_freeact_switch": "tests.freeact.test_freeact_switch",
    "tests.test_freeact_switch_cli": "tests.freeact.test_freeact_switch_cli",
    "tests.test_freeact_switch_sdk": "tests.freeact.test_freeact_switch_sdk",
    "tests.test_freeact_switch_tui": "tests.freeact.test_freeact_switch_tui",
    # tests: mcp
    "tests.test_agent_mcp": "tests.mcp.test_agent_mcp",
    "tests.test_gentools": "tests.mcp.test_gentools",
    "tests.test_mcp": "tests.mcp.test_mcp",
    # tests: permissions
    "tests.test_exact_cell_rules": "tests.permissions.test_exact_cell_rules",
    "tests.test_hostile_repo_rules": "tests.permissions.test_hostile_repo_rules",
    "tests.test_permissions": "tests.permissions.test_permissions",
    # tests: project
    "tests.test_config_precedence": "tests.project.test_config_precedence",
    "tests.test_deferred_config": "tests.project.test_deferred_config",
    "tests.test_freeact_project": "tests.project.test_freeact_project",
    "tests.test_hostile_repo_trust": "tests.project.test_hostile_repo_trust",
    "tests.test_project_env_bounds": "tests.project.test_project_env_bounds",
    "tests.test_project_rule_bound": "tests.project.test_project_rule_bound",
    "tests.test_skills": "tests.project.test_skills",
    "tests.test_trust_boundary_audit": "tests.project.test_trust_boundary_audit",
    "tests.test_trust_digest": "tests.project.test_trust_digest",
    "tests.test_user_dirs": "tests.project.test_user_dirs",
    # tests: reach
    "tests.test_code_paths_outside": "tests.reach.test_code_paths_outside",
    "tests.test_path_resolver": "tests.reach.test_path_resolver",
    # tests: repo
    "tests.test_fake_openai": "tests.repo.test_fake_openai",
    "tests.test_imports": "tests.repo.test_imports",
    # tests: shell
    "tests.test_git_secret_reads": "tests.shell.test_git_secret_reads",
    "tests.test_program_options": "tests.shell.test_program_options",
    "tests.test_shell_split": "tests.shell.test_shell_split",
    # tests: store
    "tests.test_hostile_input": "tests.store.test_hostile_input",
    "tests.test_sessions_list_event_records": "tests.store.test_sessions_list_event_records",
    "tests.test_store_durability": "tests.store.test_store_durability",
    "tests.test_store_lock": "tests.store.test_store_lock",
    "tests.test_store_rewind": "tests.store.test_store_rewind",
    # tests: text
    "tests.test_code_in_sight": "tests.text.test_code_in_sight",
    # tests: tui
    "tests.test_approval_dialog_snapshots": "tests.tui.test_approval_dialog_snapshots",
    "tests.test_approval_dialog_ux": "tests.tui.test_approval_dialog_ux",
    "tests.test_approval_installs": "tests.tui.test_approval_installs",
    "tests.test_auto_default": "tests.tui.test_auto_default",
    "tests.test_cancel_anything": "tests.tui.test_cancel_anything",
    "tests.test_command_menu_snapshots": "tests.tui.test_command_menu_snapshots",
    "tests.test_demo_model": "tests.tui.test_demo_model",
    "tests.test_first_paint": "tests.tui.test_first_paint",
    "tests.test_hostile_repo_display": "tests.tui.test_hostile_repo_display",
    "tests.test_interrupt_restart": "tests.tui.test_interrupt_restart",
    "tests.test_log_from_prompt": "tests.tui.test_log_from_prompt",
    "tests.test_long_paste": "tests.tui.test_long_paste",
    "tests.test_notify": "tests.tui.test_notify",
    "tests.test_picker_git": "tests.tui.test_picker_git",
    "tests.test_project_ux": "tests.tui.test_project_ux",
    "tests.test_project_ux_snapshots": "tests.tui.test_project_ux_snapshots",
    "tests.test_prompt_before_kernel": "tests.tui.test_prompt_before_kernel",
    "tests.test_quit_keys": "tests.tui.test_quit_keys",
    "tests.test_status_commands": "tests.tui.test_status_commands",
    "tests.test_text_protocol_tui": "tests.tui.test_text_protocol_tui",
    "tests.test_toast_place": "tests.tui.test_toast_place",
    "tests.test_tui_app": "tests.tui.test_tui_app",
    "tests.test_tui_approvals": "tests.tui.test_tui_approvals",
    "tests.test_tui_checkpoints": "tests.tui.test_tui_checkpoints",
    "tests.test_tui_command_menu": "tests.tui.test_tui_command_menu",
    "tests.test_tui_log_keys": "tests.tui.test_tui_log_keys",
    "tests.test_tui_long_session": "tests.tui.test_tui_long_session",
    "tests.test_tui_output_fold": "tests.tui.test_tui_output_fold",
    "tests.test_tui_output_fold_snapshots": "tests.tui.test_tui_output_fold_snapshots",
    "tests.test_tui_pager": "tests.tui.test_tui_pager",
    "tests.test_tui_pickers": "tests.tui.test_tui_pickers",
    "tests.test_tui_replay_live": "tests.tui.test_tui_replay_live",
    "tests.test_tui_replay_live_events": "tests.tui.test_tui_replay_live_events",
    "tests.test_tui_replay_live_habits": "tests.tui.test_tui_replay_live_habits",
    "tests.test_tui_resume": "tests.tui.test_tui_resume",
    "tests.test_tui_rewind_ux": "tests.tui.test_tui_rewind_ux",
    "tests.test_tui_small_items": "tests.tui.test_tui_small_items",
    "tests.test_tui_snapshots": "tests.tui.test_tui_snapshots",
    "tests.test_tui_snapshots_ux": "tests.tui.test_tui_snapshots_ux",
    "tests.test_tui_subagents": "tests.tui.test_tui_subagents",
    "tests.test_user_shell": "tests.tui.test_user_shell",
    "tests.test_visible_draw_paths": "tests.tui.test_visible_draw_paths",
    # added on main after the table was first written
    "tests.test_approval_keys_hint": "tests.tui.test_approval_keys_hint",
    "tests.test_bench_real_model": "tests.repo.test_bench_real_model",
    "tests.test_docker_protected_names": "tests.execution.test_docker_protected_names",
    "tests.test_effects_attacks": "tests.effects.test_effects_attacks",
    "tests.test_env_policy_sdk_scan": "tests.project.test_env_policy_sdk_scan",
    "tests.test_git_unbounded_reads": "tests.shell.test_git_unbounded_reads",
    "tests.test_inline_code": "tests.shell.test_inline_code",
    "tests.test_project_settings_table": "tests.project.test_project_settings_table",
    "tests.test_screens_80x24_snapshots": "tests.tui.test_screens_80x24_snapshots",
    "tests.test_screens_fit_80x24": "tests.tui.test_screens_fit_80x24",
    "tests.test_slash_table": "tests.tui.test_slash_table",
    "tests.test_status_bar_fit": "tests.tui.test_status_bar_fit",
}

# The docstring of each new package's __init__.py: what it is and what its public face is.
PACKAGES: dict[str, str] = {
    "freeact_tui.permissions": (
        "Permission rules: which actions run without asking, which always ask, and which never run.\n\n"
        "The public face is ``rules.Permissions`` (load, decide, remember); ``patterns`` proposes the rule a\n"
        "dialog saves, ``cells`` the exact-cell rule for Python, ``match`` is how a rule meets a tool call.\n"
    ),
    "freeact_tui.reach": (
        "How far an action or a rule reaches: where a path word really leads (``resolve``), which paths an\n"
        "action names outside the working directory (``named_paths``), path globs (``globs``), the secrets a\n"
        "recursive search reads (``search``) and how broad a rule pattern is (``breadth``). Pure functions.\n"
    ),
    "freeact_tui.shell": (
        "Shell parsing without a shell: the words of a command line (``words``), the programs it runs and\n"
        "what they read (``programs``, ``options``, ``gitreads``). Pure functions, no imports of the app.\n"
    ),
    "freeact_tui.project": (
        "The project and the user: app directories (``paths``), the config and its layered sources\n"
        "(``config``, ``sources``), folder trust (``trust``, ``review``, ``policy``, ``env_policy``), a\n"
        "freeact ``.freeact/`` folder (``freeact_dir``), skills, the one reader of a project's files\n"
        "(``files``) and the app's own writes into it (``own_writes``). The public face is ``config.load_config``.\n"
    ),
    "freeact_tui.text": (
        "Text safety: what is shown is what is there. ``safe`` makes hidden and reordering characters\n"
        "visible, ``codeshow`` shows code for approval, ``userwords`` takes the user's own words from a prompt.\n"
    ),
    "freeact_tui.checkpoints": (
        "Checkpoints of the working directory before each approved action that can write, and undo, rewind\n"
        "and diff over them. The public face is ``checkpointing.Checkpointing`` (the agent and the TUI call\n"
        "only it); ``engine`` stores states in a shadow git repository, ``records``/``limits`` are its data.\n"
    ),
    "freeact_tui.execution.kernel": (
        "The local ipybox kernel: the executor (``executor.KernelExecutor``), its Jupyter Kernel Gateway\n"
        "process (``gateway_process``, ``spare_gateway``), the client, the code run at start and the pool of\n"
        "subagent kernels.\n"
    ),
    "freeact_tui.execution.gateway": (
        "Kernels in a remote, already running Jupyter (Enterprise) Gateway: ``remote.RemoteExecutor``, where\n"
        "the gateway is (``endpoint``), approvals over the kernel's stdin (``inband``) and release on exit.\n"
    ),
    "freeact_tui.execution.isolation": (
        "Isolated executors: the bubblewrap sandbox (``sandbox``, ``bridge``, ``protect``) and docker\n"
        "(``docker``, ``docker_image``); both run the local kernel inside their walls.\n"
    ),
    "freeact_tui.execution.tools": (
        "The tool server the kernel calls MCP tools through (``server``), its link to the kernel (``link``),\n"
        "which tools a kernel may call (``allowlist``) and the MCP sessions behind them (``mcp_session``).\n"
    ),
    "tests": "The tests, one folder per package of ``freeact_tui``; ``tests/fast/`` needs no kernel or process.\n",
    "tests.core": "Tests of the shared modules at ``freeact_tui``'s root (git runs, typed-ahead keys).\n",
    "tests.repo": "The repository's own rules (imports, module size) and the fake model server of the tests.\n",
    "tests.fast.repo": "The repository's own rules that need no process (module size).\n",
    "tests.fast.execution": "Kernel message handling that needs no kernel.\n",
    "tests.fast": (
        "The fast tier: tests that start no kernel, no process and no pty (``tests/fast/conftest.py``\n"
        "fails a test that does). ``python -m pytest -q tests/fast`` gives feedback in seconds.\n"
    ),
}

# import-linter: the layers of the package, top to bottom (a row's packages never import each other).
LAYERS: list[str] = [
    "freeact_tui.cli",
    "freeact_tui.tui | freeact_tui.acp | freeact_tui.freeact | freeact_tui.compat",
    "freeact_tui.agent",
    "freeact_tui.checkpoints",
    "freeact_tui.actions | freeact_tui.mcp",
    "freeact_tui.execution | freeact_tui.store",
    "freeact_tui.permissions",
    "freeact_tui.effects",
    "freeact_tui.project",
    "freeact_tui.reach | freeact_tui.events | freeact_tui.demo",
    "freeact_tui.shell | freeact_tui.text | freeact_tui.toolcalls | freeact_tui.version"
    " | freeact_tui.timeline | freeact_tui.typeahead | freeact_tui.gitrun",
]
# Upward imports the layers (and the no-cycles contract) allow, each with its reason: (import, reason).
LAYER_IGNORES: list[tuple[str, str]] = [
    (
        "freeact_tui.checkpoints.checkpointing -> freeact_tui.agent.settings",
        "type-only: Checkpointing.from_settings reads seven fields of the agent's Settings; passing"
        " those fields (or a protocol of them) instead removes it - a logic change left to its own step",
    ),
]

# Text fixes a move needs beyond names and __file__ depth: (new file, old text, new text).
FIXUPS: list[tuple[str, str, str]] = [
    (  # the app's package folder, once the folder of pathreach.py
        "tests/reach/test_code_paths_outside.py",
        'Path(__import__("freeact_tui.reach.named_paths").pathreach.__file__).resolve().parent',
        'Path(__import__("freeact_tui").__file__).resolve().parent',
    ),
]

# Modules that may stay at the package root (the shared core); a root module not listed is reported.
ROOT_MODULES = {"__init__", "__main__", "events", "toolcalls", "version", "timeline", "typeahead", "gitrun"}

# Strings that look like a module's name but are data (a key in session files): never rewritten.
DATA_STRINGS: list[str] = [
    'CONFIG_META_KEY = "freeact_tui.config"',  # cli/sessions.py: the key sessions were saved with
]

# ---------------------------------------------------------------------------------------------------

SCAN_DIRS = ("freeact_tui", "tests", "bench", "docs", ".ci", "tools")
SCAN_SUFFIXES = {".py", ".md", ".toml", ".mjs", ".sh", ".txt", ".cfg", ".ini", ""}
SKIP_PARTS = {"__snapshots__", "__pycache__", ".venv", "node_modules", ".git"}


def die(message: str) -> None:
    print(f"restructure: {message}", file=sys.stderr)
    raise SystemExit(1)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def module_path(dotted: str) -> Path:
    """``freeact_tui.a.b`` -> ``freeact_tui/a/b.py`` (tests the same way)."""
    return Path(*dotted.split(".")).with_suffix(".py")


def check_table() -> None:
    olds, news = set(MOVES), list(MOVES.values())
    if len(set(news)) != len(news):
        die("two modules move to the same place")
    for new in news:
        if new in olds:
            die(f"{new} is both an old and a new name: the table would chain")


# --- 1. moves ----------------------------------------------------------------------------------------

_FILE_ANCESTOR = re.compile(
    r"Path\(__file__\)(\.resolve\(\))?(?:(?P<parents>(?:\.parent(?!s))+)|\.parents\[(?P<n>\d+)\])"
)


def _string_spans(text: str) -> list[tuple[int, int]]:
    """Where the string literals of Python source are (code inside a string is not this module's code)."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    spans: list[tuple[int, int]] = []
    opened: list[int] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            start = starts[tok.start[0] - 1] + tok.start[1]
            end = starts[tok.end[0] - 1] + tok.end[1]
            name = tokenize.tok_name[tok.type]
            if name == "STRING":
                spans.append((start, end))
            elif name == "FSTRING_START":
                opened.append(start)
            elif name == "FSTRING_END" and opened:
                spans.append((opened.pop(), end))
    except (tokenize.TokenError, SyntaxError):
        return []
    return spans


def deepen(text: str, delta: int) -> str:
    """Keep ``Path(__file__)``'s ancestors pointing at the same folder after a move ``delta`` deeper
    (in the module's own code: a ``Path(__file__)`` inside a string literal is another file's)."""
    if delta == 0:
        return text
    strings = _string_spans(text)

    def repl(m: re.Match[str]) -> str:
        if any(a <= m.start() < b for a, b in strings):
            return m.group(0)
        index = m.group("parents").count(".parent") - 1 if m.group("parents") else int(m.group("n"))
        index += delta
        resolve = m.group(1) or ""
        suffix = ".parent" if index == 0 else f".parents[{index}]"
        return f"Path(__file__){resolve}{suffix}"

    return _FILE_ANCESTOR.sub(repl, text)


def ensure_package(root: Path, package: Path, touched: set[Path]) -> None:
    """Create ``package`` (and its parents below the top folder) with an ``__init__.py``."""
    parts = package.parts
    for depth in range(1, len(parts) + 1):
        folder = root.joinpath(*parts[:depth])
        folder.mkdir(exist_ok=True)
        init = folder / "__init__.py"
        if init.exists():
            continue
        dotted = ".".join(parts[:depth])
        doc = PACKAGES.get(dotted)
        if doc is None and dotted.startswith("tests."):
            area = parts[depth - 1]
            doc = f"Tests of ``freeact_tui/{area}/`` (see ``tests/__init__.py``).\n"
        if doc is None:
            die(f"no docstring for the new package {dotted} in PACKAGES")
        init.write_text(f'"""{doc}"""\n', encoding="utf-8")
        git(root, "add", str(init.relative_to(root)))
        touched.add(init)


def move_all(root: Path, touched: set[Path]) -> int:
    moved = 0
    for old, new in MOVES.items():
        src, dst = root / module_path(old), root / module_path(new)
        if not src.exists():
            if not dst.exists():  # removed on main since the table was written: nothing to move
                print(
                    f"restructure: warning: {old} is gone (neither {src.relative_to(root)} nor {dst.relative_to(root)})"
                )
            continue
        if dst.exists():
            die(f"{old}: both {src.relative_to(root)} and {dst.relative_to(root)} exist")
        ensure_package(root, dst.parent.relative_to(root), touched)
        text = src.read_text(encoding="utf-8")
        git(root, "mv", str(src.relative_to(root)), str(dst.relative_to(root)))
        dst.write_text(deepen(text, len(dst.parts) - len(src.parts)), encoding="utf-8")
        touched.add(dst)
        for sibling in sorted(src.parent.glob(src.stem + ".*")):
            if sibling.suffix != ".py" and sibling.is_file():
                git(
                    root,
                    "mv",
                    str(sibling.relative_to(root)),
                    str(dst.with_suffix(sibling.suffix).relative_to(root)),
                )
        snapshots = src.parent / "__snapshots__" / src.stem
        if snapshots.is_dir():
            target = dst.parent / "__snapshots__" / dst.stem
            target.parent.mkdir(parents=True, exist_ok=True)
            git(root, "mv", str(snapshots.relative_to(root)), str(target.relative_to(root)))
        moved += 1
    for folder in sorted({p for p in (root / "tests" / "__snapshots__",) if p.is_dir()}):
        if not any(folder.iterdir()):
            folder.rmdir()  # every snapshot folder went with its test module
    return moved


# --- 2. references -----------------------------------------------------------------------------------


def _children(old: str) -> list[str]:
    """The next name components of new modules under ``old`` (``execution.kernel`` -> ``executor`` ...):
    ``old`` followed by one of them is already a new name and is left alone."""
    prefix = old + "."
    return sorted({new[len(prefix) :].split(".")[0] for new in MOVES.values() if new.startswith(prefix)})


def dotted_pattern() -> re.Pattern[str]:
    alternatives = []
    for old in sorted(MOVES, key=len, reverse=True):
        children = _children(old)
        guard = "".join(rf"(?!\.{re.escape(child)}(?!\w))" for child in children)
        if children:  # ``from <new package> import <its module>`` is already new
            guard += r"(?! import (?:" + "|".join(map(re.escape, children)) + r")(?!\w))"
        alternatives.append(rf"{re.escape(old)}(?!\w){guard}")
    return re.compile(r"(?<![\w.])(?:" + "|".join(alternatives) + ")")


def _short_path(dotted: str) -> str | None:
    """``freeact_tui.execution.kernel`` -> ``execution/kernel.py``; None for a top-level module."""
    parts = dotted.split(".")
    if parts[0] == "freeact_tui" and len(parts) > 2:
        return "/".join(parts[1:]) + ".py"
    return None


def path_pattern() -> tuple[re.Pattern[str], dict[str, str]]:
    table: dict[str, str] = {}
    for old, new in MOVES.items():
        table[module_path(old).as_posix()] = module_path(new).as_posix()
        short_old, short_new = _short_path(old), _short_path(new)
        if short_old is not None and short_new is not None:
            table[short_old] = short_new
        elif short_old is None and old.startswith("freeact_tui.") and short_new is not None:
            pass  # a bare "config.py" is ambiguous (freeact/config.py): only the full path is rewritten
    keys = sorted(table, key=len, reverse=True)
    return re.compile(r"(?<![\w/.])(?:" + "|".join(re.escape(k) for k in keys) + r")(?![\w])"), table


_FROM_IMPORT = re.compile(
    r"^(?P<indent>[ \t]*)from (?P<parent>[\w.]+) import (?:\((?P<group>[^)]*)\)|(?P<line>[^\n(]+?))[ \t]*$",
    re.MULTILINE,
)


def rewrite_from_imports(text: str) -> str:
    """``from freeact_tui import paths, trust`` -> ``from freeact_tui.project import paths, trust``."""

    def repl(m: re.Match[str]) -> str:
        parent = m.group("parent")
        body = m.group("group") if m.group("group") is not None else m.group("line")
        body = re.sub(r"#[^\n]*", "", body)
        if "\\" in body:
            return m.group(0)
        names = [n.strip() for n in body.replace("\n", " ").split(",") if n.strip()]
        if not any(f"{parent}.{n.split()[0]}" in MOVES for n in names):
            return m.group(0)
        groups: dict[str, list[str]] = {}
        for item in names:
            words = item.split()
            name, alias = words[0], (words[2] if len(words) == 3 and words[1] == "as" else None)
            new = MOVES.get(f"{parent}.{name}")
            if new is None:
                groups.setdefault(parent, []).append(item)
                continue
            new_parent, leaf = new.rsplit(".", 1)
            bound = alias or name
            groups.setdefault(new_parent, []).append(leaf if leaf == bound else f"{leaf} as {bound}")
        indent = m.group("indent")
        return "\n".join(f"{indent}from {p} import {', '.join(items)}" for p, items in groups.items())

    return _FROM_IMPORT.sub(repl, text)


def rewrite_text(
    text: str, dotted: re.Pattern[str], paths: re.Pattern[str], path_table: dict[str, str]
) -> str:
    kept = {f"\x00DATA{i}\x00": data for i, data in enumerate(DATA_STRINGS) if data in text}
    for mark, data in kept.items():
        text = text.replace(data, mark)
    text = rewrite_from_imports(text)
    text = dotted.sub(lambda m: MOVES[m.group(0)], text)
    text = paths.sub(lambda m: path_table[m.group(0)], text)
    for mark, data in kept.items():
        text = text.replace(mark, data)
    return text


def scanned_files(root: Path) -> Iterable[Path]:
    for top in SCAN_DIRS:
        base = root / top
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            rel = path.relative_to(root)
            if path.is_file() and not SKIP_PARTS.intersection(rel.parts) and path.suffix in SCAN_SUFFIXES:
                yield path
    for path in sorted(root.glob("*.md")) + sorted(root.glob("*.toml")):
        if path.name != "CHANGELOG.md":
            yield path


def rewrite_all(root: Path, touched: set[Path]) -> int:
    dotted = dotted_pattern()
    paths, path_table = path_pattern()
    changed = 0
    this_file = Path(__file__).resolve()
    for path in scanned_files(root):
        if path.resolve() == this_file:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        new = rewrite_text(text, dotted, paths, path_table)
        for file, old_text, new_text in FIXUPS:
            if path == root / file:
                new = new.replace(old_text, new_text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            touched.add(path)
            changed += 1
    return changed


# --- 3. import-linter ---------------------------------------------------------------------------------

_LAYERS_BLOCK = re.compile(
    r'(name = "Layers: imports only point downwards"\ntype = "layers"\ncontainers = \[\]\n)layers = \[\n.*?\n\]\n(?:ignore_imports = \[\n.*?\n\]\n)?',
    re.DOTALL,
)


def write_layers(root: Path, touched: set[Path]) -> None:
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    rows = "".join(f'    "{row}",\n' for row in LAYERS)
    block = f"layers = [\n{rows}]\n"
    if LAYER_IGNORES:
        block += (
            "ignore_imports = [\n"
            + "".join(f'    # {reason}\n    "{imp}",\n' for imp, reason in LAYER_IGNORES)
            + "]\n"
        )
    new, count = _LAYERS_BLOCK.subn(lambda m: m.group(1) + block, text)
    if count != 1:
        die("pyproject.toml: the layers contract was not found where expected")
    cycles = ""
    if LAYER_IGNORES:
        cycles = (
            "ignore_imports = [\n"
            + "".join(f'    "{imp}",  # see the layers contract\n' for imp, _ in LAYER_IGNORES)
            + "]\n"
        )
    new, count = _CYCLES_BLOCK.subn(lambda m: m.group(1) + cycles, new)
    if count != 1:
        die("pyproject.toml: the no-cycles contract was not found where expected")
    if new != text:
        pyproject.write_text(new, encoding="utf-8")
        touched.add(pyproject)


_CYCLES_BLOCK = re.compile(
    r'(name = "No import cycles between the modules of any package"\ntype = "acyclic_siblings"\nancestors = \[[^\n]*\]\n)(?:ignore_imports = \[\n.*?\n\]\n)?',
    re.DOTALL,
)


# --- main ---------------------------------------------------------------------------------------------


def main() -> None:
    root = Path(git(Path.cwd(), "rev-parse", "--show-toplevel").strip())
    if git(root, "status", "--porcelain").strip():
        die("the working tree has uncommitted changes: commit them first (nothing was changed)")
    check_table()
    touched: set[Path] = set()
    moved = move_all(root, touched)
    rewrite_all(root, touched)
    write_layers(root, touched)
    for path in sorted((root / "freeact_tui").glob("*.py")):
        if path.stem not in ROOT_MODULES:
            print(f"restructure: warning: freeact_tui/{path.name} is at the root and not in MOVES")
    for path in sorted((root / "tests").glob("test_*.py")):
        print(f"restructure: warning: tests/{path.name} is not in MOVES (it stays at tests/)")
    python = sorted(str(p.relative_to(root)) for p in touched if p.suffix == ".py" and p.exists())
    if python:
        ruff = [shutil.which("ruff") or sys.executable, *([] if shutil.which("ruff") else ["-m", "ruff"])]
        subprocess.run([*ruff, "check", "--fix", "--select", "I", "--quiet", *python], cwd=root, check=False)
    changed = len(git(root, "status", "--porcelain").splitlines())
    print(f"restructure: moved {moved} modules; {changed} paths changed (0 on a second run)")


if __name__ == "__main__":
    main()
