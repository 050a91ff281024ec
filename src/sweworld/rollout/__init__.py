"""Rollouts: trajectories, their crash-safe store, the parallel resumable runner, metrics."""
