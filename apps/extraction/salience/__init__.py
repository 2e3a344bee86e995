"""Salience: is a user's clause a durable fact about them (keep it) or chatter about the current problem (drop it)?

The rules extractor's generic statement path (extractors/rules/statements.py) asks this of every first-person
statement no structured rule recognised. A logistic regression over the clause's all-MiniLM-L6-v2 embedding and
a few hand features (features.py) answers it (scorer.py); weights.json holds its weights and those of a lexical
fallback for deployments without the local model. `python -m apps.extraction.salience.train` rebuilds
weights.json from data/labelled.jsonl (hand-labelled clauses) and the dev part of the extraction corpus
(bench/data/extraction/dev/, never held_out/).

Settings: EXTRACTION_SALIENCE (on/off) and EXTRACTION_SALIENCE_THRESHOLD.
"""
