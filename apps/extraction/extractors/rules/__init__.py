"""RulesExtractor: offline, deterministic English pattern extraction (the extractor contract in extractors.base).

From USER messages it reads durable facts about the user: name, job and employer, location, attributes (allergies,
diet, age, birthday, languages, family), contact details (marked PII), order/ticket/transaction identifiers,
"remember that ..." requests, plans with dates, preferences, and retractions ("forget my phone number",
"I no longer live in Paris"). From ASSISTANT, SYSTEM and TOOL messages it reads support outcomes (tickets opened,
refunds issued, replacements sent, "Issue: / Resolution:" lines) and identifiers. A first-person statement no
rule recognises ("our choir rehearses every Tuesday") is kept when the salience classifier (apps.extraction.salience)
finds it durable (statements.py; EXTRACTION_SALIENCE). Small talk, questions and hypotheticals produce nothing.
Facts are written in the third person about "the user", never by name (person.Person says why).

Modules: text (splitting, fillers), person (third-person rewriting), dates, lexicon (word lists), facts (user
statements), commands (remember/forget/retractions), support (outcomes, and the user-clause hook for: identifiers
(typed, "identifier:<kind>[:<value>]"), contacts (the user's phones and emails, contact channel and time), addresses,
people (the user's contacts)), subjects (the subject names those use),
statements (the generic statement path), extractor.
"""

from apps.extraction.extractors.rules.extractor import RulesExtractor

__all__ = ["RulesExtractor"]
