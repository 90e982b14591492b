"""The toolkit as a language model calls it: JSON arguments in, text observations out, hand-ins recorded.

One implementation for every door an agent may use: the openai agent calls these in-process, and the
trial's MCP server (pytest_itbench/mcp) serves the same ones to any agent that speaks MCP.

    toolbox.py        the tools of one task by domain, their JSON schemas, and running one call
    kubectl_rules.py  kubectl refusals on top of the toolkit's deny list (argument lists from a model)
    diagnosis.py      submit_diagnosis: ITBench's agent-output shape as a schema, and its checks
    ciso_tools.py     write_file, read_file, run_script, test_rego, test_kyverno_policy, hand_in
    handin.py         what the agent will hand in: the last diagnosis (draft or final) or the CISO files
    observations.py   tool answers as text (traces one line a span)
"""
