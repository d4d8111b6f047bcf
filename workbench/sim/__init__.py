"""The offline simulated provider: ``sim/<profile>`` models (DESIGN §3).

``respond(profile, messages, ...)`` answers a chat prompt written by the template
convention as a simulated judge (``judge-a`` … ``judge-f``), answerer
(``answer-strong``, ``-mid``, ``-weak``, ``-tiny``) or tool (``summarizer``,
``paraphraser``, ``decomposer``, ``extractor``). ``register_items`` tells the
answerers which questions they know. See ``workbench/sim/README.md``.

Sim numbers show that the pipeline works; they are never evidence about real LLMs.
"""

from workbench.sim.engine import PROFILES, SimReply, profiles, respond
from workbench.sim.registry import clear_registry, lookup, register_bundled, register_items

__all__ = [
    "PROFILES",
    "SimReply",
    "clear_registry",
    "lookup",
    "profiles",
    "register_bundled",
    "register_items",
    "respond",
]
