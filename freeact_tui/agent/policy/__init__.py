"""What a model reply leads to: the reply policy (``reply``) and what it reads — the action mode
(``mode``), the outcomes of actions (``outcomes``), code blocks and the text protocol
(``text_protocol``), calls written as text (``written_calls``), nudges (``nudge``) and the
repeat guard (``repeat_guard``). No I/O: every function here is tested as a table."""
