"""The offline simulated provider: ``sim/<profile>`` models (DESIGN §3).

Sim numbers show that the pipeline works; they are never evidence about real LLMs.
"""
