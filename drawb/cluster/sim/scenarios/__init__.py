"""Simulated cluster scenarios: bundled hardware descriptions and synthetic clusters."""

from drawb.cluster.sim.scenarios.loader import Scenario, ScenarioError, build_scenario, list_scenarios, synthetic

__all__ = ["Scenario", "ScenarioError", "build_scenario", "list_scenarios", "synthetic"]
