"""paor's benchmark suite: an OpenAI-compatible simulator, scenarios S0-S8, and peers side by side.

Run it with `python -m benchmarks` (see `benchmarks/README.md`). The pieces:

- `_sim`: the simulator (seeded latencies, exact token and shared-prefix accounting, faults), over
  HTTP or in process;
- `_scenarios`: the scripted scenarios and their critical paths;
- `_paor`, `_react`, `_langgraph`, `_openai_agents`: each framework under test;
- `_suite`, `_figures`, `_report`: running everything, the figures and targets, the tables;
- `_temporal`: the Temporal backend beside the in-process one (throughput, overhead per run);
- `_memory`: S7 in a fresh process; `_peer_openai_agents`: the script run in the SDK's environment.
"""
