"""Autonomous STM nano-assembly: collision-free plans, SAT schedules and RL execution.

An AI planning framework for building nanostructures with a scanning tunnelling microscope (STM):
molecules are assigned to target sites minimising total travel (Hungarian assignment), each move gets a
corridor of lattice sites that must be empty when it runs, precedence cycles are repaired by target swaps
and parking, and a SAT solver (python-sat, layered order encoding) computes a minimum-makespan schedule;
an independent replay verifier checks the plan. NanoAssemblyGym (Gymnasium) simulates STM manipulation
(bias/current-dependent hopping, kicks, tip changes, drift, re-imaging cost, simulated constant-current
images); a tabular Q-learning agent executes moves and a whole plan (``Assemble-v0``), compared with a
scripted fixed-parameter push and a three-line adaptive set-point rule.

Reference: ICML 2026 (title not recovered; only the abstract is public). Everything beyond the abstract
(lattice, physics, encoding) is our design, see README "Deviations from the paper".
"""

__all__ = [
    "AdaptiveSetpoint",
    "AssembleEnv",
    "MoveMoleculeEnv",
    "Plan",
    "QLearningAgent",
    "ScheduleInfeasibleError",
    "ScriptedPush",
    "plan_assembly",
    "verify_plan",
]


def __getattr__(name):  # scipy, the SAT solver, gymnasium and the agents load only when asked for (fast --help)
    if name in ("Plan", "plan_assembly", "verify_plan"):
        from icml26.nanoassembly import assembly

        return getattr(assembly, name)
    if name == "ScheduleInfeasibleError":
        from icml26.nanoassembly.schedule import ScheduleInfeasibleError

        return ScheduleInfeasibleError
    if name in ("MoveMoleculeEnv", "AssembleEnv"):
        from icml26.nanoassembly import env

        return getattr(env, name)
    if name in ("AdaptiveSetpoint", "QLearningAgent", "ScriptedPush"):
        from icml26.nanoassembly import agents

        return getattr(agents, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
