"""Agents: the loop (a policy, an Executor, a trajectory), text actions, built-in policies, config."""
