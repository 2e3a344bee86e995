"""RulesExtractor.extract: parse each message once, run the rules for its role, then merge and order candidates."""

import dataclasses
import re
from dataclasses import dataclass

from django.conf import settings

from apps.extraction.extractors.base import (
    NAMED_VALUE_SUBJECTS,
    Candidate,
    ConversationMessage,
    ExistingMemory,
    covers,
)
from apps.extraction.extractors.rules import lexicon, subjects
from apps.extraction.extractors.rules.addresses import unclaimed_addresses
from apps.extraction.extractors.rules.business import BUSINESS_RULES, named_provider
from apps.extraction.extractors.rules.changes import Retired, retired_values
from apps.extraction.extractors.rules.commands import (
    clause_remember,
    clause_retraction,
    remember_body,
    sentence_command,
)
from apps.extraction.extractors.rules.contacts import (
    EMAIL,
    PHONE,
    PHONE_SHAPED,
    contacts,
    names_someone,
    unclaimed_phones,
)
from apps.extraction.extractors.rules.context import RuleContext
from apps.extraction.extractors.rules.corrections import (
    UNLESS_CORRECTED,
    apply_corrections,
    corrected_statement,
    correction,
    correction_marker,
    recorded_then_right,
    split_mid_correction,
    wrong_then_right,
)
from apps.extraction.extractors.rules.dates import with_resolved_date
from apps.extraction.extractors.rules.dialogue import (
    addressed_name,
    agent_notes,
    agent_readback_as_customer,
    agent_statement_as_customer,
    agent_update_as_customer,
    agrees,
    asks_someone_elses_name,
    asks_to_confirm_reading,
    change_made,
    chosen_option,
    confirmation_asked,
    confirmed_statements,
    in_first_person,
    offered_options,
    plan_change_asked,
    requested_slots,
    slot_statements,
    speaks_of_itself,
)
from apps.extraction.extractors.rules.facts import IDENTITY_RULES, sign_off_name, stated_name
from apps.extraction.extractors.rules.identifiers import identifiers, renewed_identifiers, unclaimed_identifiers
from apps.extraction.extractors.rules.people import (
    agent_assigned_contacts,
    children_named,
    contact_named_after_mention,
    contacts_named_in_passing,
    mentioned_contact,
    people_named,
    pronoun_fits,
    relation_named_after,
    relations_email,
    with_pronouns_resolved,
)
from apps.extraction.extractors.rules.person import Person, rewrite_first_person, rewrite_second_person
from apps.extraction.extractors.rules.plans import PLAN_RULES
from apps.extraction.extractors.rules.preferences import PREFERENCE_RULES, nothing_wanted
from apps.extraction.extractors.rules.statements import (
    OWNED_BY_RULES,
    THIRD_PERSON_LEXICAL_FLOOR,
    THIRD_PERSON_MIN_SCORE,
    PendingStatement,
    pending_statement,
    statement_about_someone,
)
from apps.extraction.extractors.rules.support import (
    accepted_offer,
    booking,
    confirmed_change,
    done_report,
    key_value_line,
    outcomes,
    record_name,
    support_clause,
)
from apps.extraction.extractors.rules.text import (
    MAX_CLAUSE_CHARS,
    ONE_OFF,
    Clause,
    conditional_sentence,
    normalise_text,
    split_clauses,
    split_sentences,
    uncertain_in_itself,
)
from apps.extraction.salience.scorer import SalienceScorer, get_scorer
from apps.memories.normalise import normalise_content

AGENT_ROLES = ("assistant", "system", "tool")
AGENT_RESTATEMENT_FACTOR = 0.85
# Tried in order on each user clause; the first that recognises the clause wins.
USER_FACT_RULES = IDENTITY_RULES + BUSINESS_RULES + PLAN_RULES + PREFERENCE_RULES
_STANDING_WISH = re.compile(r"^I(?:'d|\s+would)\s+(?:much\s+|really\s+)?(?:like|prefer|rather)\s+(?=(?:the|my|our|all|any"
                            r"|it|them|to\s+(?:get|have|receive|opt\s+out|unsubscribe))\b)", re.I)
# "can you text me instead of emailing", "could the reminders come by text rather than email": a question that asks for
# a way of being served from now on, read as the standing request it is.
_ASKED_FOR = re.compile(r"^(?:(?:and|also|oh|so|but|going\s+forward|from\s+now\s+on|in\s+future)[\s,]+)*(?:can|could|would|will)\s+(?:you\s+(?:please\s+)?|(?=(?:the|my|our)\s))",
                        re.I)
_FROM_NOW_ON = re.compile(r"\b(?:instead(?:\s+of)?|rather\s+than|going\s+forward|from\s+now\s+on|in\s+(?:the\s+)?future"
                          r"|always|any\s?more|no\s+more|by\s+default)\b", re.I)
_THING_MODAL = re.compile(r"^(?P<thing>(?:the|my|our)\s+(?:[\w-]+\s+){0,2}?[\w-]+)\s+(?=(?:come|go|be|arrive|get)\b)", re.I)


def standing_request(text: str) -> str | None:
    """The standing request a question makes ("please text me instead of emailing", "the reminders should come by text
    rather than email"), or None for a question that asks no way of being served from now on."""
    if not (asked := _ASKED_FOR.match(text)) or not _FROM_NOW_ON.search(text) or ONE_OFF.search(text):
        return None
    rest = text[asked.end():].rstrip(" ?")
    if thing := _THING_MODAL.match(rest):
        return f"{thing.group('thing')} should {rest[thing.end():]}"
    if not asked.group(0).lower().rstrip().endswith(("you", "please")):
        return None
    return f"please {rest}" if _FROM_NOW_ON.search(rest) else f"going forward please {rest}"


_BULLET = re.compile(r"^\s*(?:[-*\u2022>]+|\d{1,2}[.)])\s+")


@dataclass(frozen=True)
class _Sentence:
    text: str
    clauses: list[Clause]


@dataclass(frozen=True)
class _Line:
    text: str
    sentences: list[_Sentence]


@dataclass(frozen=True)
class _Message:
    message: ConversationMessage
    lines: list[_Line]
    lowercase: bool  # typed in lowercase (typed_in_lowercase), so its names may be too


class RulesExtractor:
    """Offline, deterministic English pattern extraction (see the package docstring for what it reads).

    `scorer` decides which generic statements to keep (statements.py); by default the process-wide salience
    scorer, unless the EXTRACTION_SALIENCE setting turns the generic statement path off.
    """

    name = "rules"

    def __init__(self, *, scorer: SalienceScorer | None = None):
        self._scorer = scorer

    def extract(
        self, *, messages: list[ConversationMessage], existing: list[ExistingMemory], user_name: str | None = None
    ) -> list[Candidate]:
        parsed = []
        asked: list[str] = []
        confirming: list[tuple[str, str]] = []
        offered = None
        said = [message for message in messages
                if (message.role == "user" or message.role in AGENT_ROLES) and (message.text or "").strip()]
        for index, message in enumerate(said):
            text = normalise_text(message.text)
            answers = slot_statements(text, asked) if message.role == "user" else []
            afterwards: list[str] = []
            if message.role == "user":
                answers += confirmed_statements(text, confirming, answers) + chosen_option(text, offered)
                reply = said[index + 1] if index + 1 < len(said) else None
                answers += _changes_made(text, said[index + 1:index + 4])
                if reply is not None and reply.role == "assistant" and (name := addressed_name(text, reply.text)):
                    afterwards.append(name)  # after the message, so that its first sentence still opens it
            parsed.append(_parse(message, text, answers, afterwards))
            asked = requested_slots(text) if message.role == "assistant" else []
            confirming = confirmation_asked(text) if message.role == "assistant" else []
            offered = offered_options(text) if message.role == "assistant" else None
        person = Person(known=(user_name or "").strip() or _stated_name(parsed))
        # Whom "delete her number" means in a message that names no one: the contact named last in the batch, else
        # a known contact (an earlier session's) that this message or the agent's just before names.
        talked_about = None
        known_contacts = _known_contacts(existing)
        people = [(relation, name.title()) for relation, name in sorted(known_contacts, key=str) if name]
        found: list[Candidate | PendingStatement] = []
        unclaimed: list[Retired] = []
        for index, item in enumerate(parsed):
            before = parsed[index - 1].message.text if index and parsed[index - 1].message.role != "user" else ""
            # a known contact this message names comes first, then the one the agent's question just asked about
            # ("Should I keep Lerato's number?" / "No, please remove her number"), then one named earlier in the batch
            whom = (_named_known_contact(known_contacts, item.message.text) or _asked_about(before, people)
                    or talked_about or _named_known_contact(known_contacts, f"{before}\n{item.message.text}")
                    or _only_known_contact(known_contacts, item.message.text))
            offer = before if index and parsed[index - 1].message.role == "assistant" else ""
            # a change the customer asked for ("could she do Tuesdays instead of Wednesdays?") and no fact of theirs
            # carried: the agent's reply just after, confirming it, retires the old value
            retiring = unclaimed if item.message.role != "user" else []
            said_here = _message_candidates(item, person, whom, offer=offer, people=tuple(dict.fromkeys(people)),
                                            retiring=retiring)
            unclaimed = retiring if item.message.role == "user" else []
            found += said_here
            people += [(candidate.metadata["relation"], candidate.metadata["name"]) for candidate in said_here
                       if isinstance(candidate, Candidate) and candidate.action == "add" and candidate.metadata.get("name")
                       and candidate.metadata.get("relation") and (candidate.subject or "").startswith("contact:")]
            if item.message.role == "user":
                people += [named for line in item.lines for sentence in line.sentences
                           for named in people_named(sentence.text)]
            talked_about = _last_contact(item, said_here) or talked_about
        candidates = _agent_contacts_merged(
            _without_notes_said_already(_codes_read_elsewhere(self._kept_statements(found), existing)), existing)
        _without_rejected_alternatives(candidates)
        _add_resolved_dates(candidates)
        candidates = _without_mentions_of_own_emails(_merge_duplicates(apply_corrections(candidates, existing)))
        candidates = _replaced_not_retracted(pin_replacements(_origin_beside_home(candidates), existing))
        candidates = _another_number_is_not_a_change(_shortened_names(candidates, existing), existing)
        _plan_named_alone(candidates, existing)
        _pin_role_changes(candidates, existing)
        _key_bookings(candidates, existing)
        return _honour_forgets(_pin_retractions(candidates, existing), existing)

    def _kept_statements(self, found: list[Candidate | PendingStatement]) -> list[Candidate]:
        """Candidates in message order, with the pending statements of the whole batch scored in one call."""
        pending = [item for item in found if isinstance(item, PendingStatement)]
        if not pending:
            return found
        if not settings.EXTRACTION_SALIENCE:
            return [item for item in found if not isinstance(item, PendingStatement)]
        # a statement without a first person is kept only from a high score: one the lexical weights put low is not
        # embedded at all (THIRD_PERSON_LEXICAL_FLOOR)
        floors = [THIRD_PERSON_LEXICAL_FLOOR if statement.third_person else 0.0 for statement in pending]
        scorer = self._scorer or get_scorer()
        texts = [statement.text for statement in pending]
        scores = iter(scorer.score(texts, floors))
        threshold = settings.EXTRACTION_SALIENCE_THRESHOLD
        kept: list[Candidate] = []
        for item in found:
            if not isinstance(item, PendingStatement):
                kept.append(item)
            elif (score := next(scores)) >= (max(threshold, THIRD_PERSON_MIN_SCORE) if item.third_person else threshold):
                kept.append(item.candidate(score))
        return kept


def _changes_made(text: str, following: list[ConversationMessage]) -> list[str]:
    """The plan change the customer asks for in `text`, as their statement, when the agent's reply makes it, or
    asks "Shall I switch you from 11 April?", is told yes, and then makes it."""
    if not following or following[0].role != "assistant" or (asked := plan_change_asked(text)) is None:
        return []
    statement, new_value = asked
    reply = normalise_text(following[0].text)
    if change_made(reply, new_value):
        return [statement]
    if "?" in reply and len(following) >= 3 and following[1].role == "user" and following[2].role == "assistant" and (
            agrees(normalise_text(following[1].text))) and change_made(normalise_text(following[2].text), new_value):
        return [statement]
    return []


def _parse(message: ConversationMessage, text: str, answers: list[str] = (), afterwards: list[str] = ()) -> _Message:
    """The lines, sentences and clauses of the message, whose normalised text is `text`; `answers` (bare answers to
    the agent's question, restated as "My name is ...") come first, as if the customer had said them, and
    `afterwards` (what the agent's reply shows the message said) last."""
    lines = []
    for line in [*(f"{answer}." for answer in answers), *text.split("\n"), *(f"{said}." for said in afterwards)]:
        line = _BULLET.sub("", line)
        if line.strip():
            sentences = [_Sentence(text=sentence, clauses=split_clauses(sentence))
                         for sentence in split_sentences(line)]
            lines.append(_Line(text=line.strip(), sentences=sentences))
    return _Message(message=message, lines=lines, lowercase=typed_in_lowercase(message.text))


def typed_in_lowercase(text: str) -> bool:
    """A message that starts in lowercase ("hi im amara bello, ..."): its names may be lowercase too."""
    first = next((char for char in text if char.isalpha()), "")
    return first.islower()


def _stated_name(parsed: list[_Message]) -> str | None:
    """The last name the user gives in this batch ("My name is Alice"), for the rules that build on it ("my surname
    is now Okafor" -> "Alice Okafor")."""
    name = None
    asked_someone_else = False
    for item in parsed:
        role = item.message.role
        opening = not (role == "user" and asked_someone_else)
        if role != "user":
            asked_someone_else = asks_someone_elses_name(item.message.text)
        for line in item.lines:
            if role in ("system", "tool"):
                name = record_name(line.text) or name
                continue
            if role != "user":
                continue
            for sentence in line.sentences:
                body = remember_body(sentence.text)
                clauses = split_clauses(body) if body else sentence.clauses
                for clause in clauses:
                    if not clause.question and not clause.uncertain:
                        found = stated_name(clause.text, opening=opening, lowercase=item.lowercase)
                        name = found[0] if found else name
                opening = opening and not sentence.clauses  # a bare greeting keeps the next sentence opening
    return name


def _last_contact(item: _Message, said: list) -> tuple[str, str | None] | None:
    """The contact a user message names last ("my son Timur", or "our billing contact, Sam Ito" that a rule found in
    what it `said`), or None (an agent's message: None)."""
    if item.message.role != "user":
        return None
    mentions = [mentioned_contact(sentence.text) for line in item.lines for sentence in line.sentences]
    if mention := next((mention for mention in reversed(mentions) if mention), None):
        return mention
    named = [(candidate.metadata["relation"], candidate.metadata["name"]) for candidate in said
             if isinstance(candidate, Candidate) and candidate.action == "add" and candidate.metadata.get("name")
             and candidate.metadata.get("relation") and (candidate.subject or "").startswith("contact:")]
    return named[-1] if named else None


def _asked_about(said: str, people: list[tuple[str, str]]) -> tuple[str, str] | None:
    """The one of the user's people the agent's question names by first name ("Should I keep Lerato's number as a
    secondary contact?"), or None for no question, none of them or more than one."""
    questions = " ".join(sentence for sentence in re.split(r"(?<=[.!?])\s+", said or "") if sentence.endswith("?"))
    named = {(relation, name) for relation, name in people
             if re.search(rf"(?<![\w-]){re.escape(name.split()[0])}(?![\w-])", questions)}
    return named.pop() if len({name.split()[0] for _, name in named}) == 1 else None


def _known_contacts(existing: list[ExistingMemory]) -> set[tuple[str, str | None]]:
    """(relation, name key or None) of each contact the user's memories keep ("contact:son:timur")."""
    known = set()
    for memory in existing:
        parts = (memory.subject or "").split(":")
        if parts[0] == "contact" and len(parts) > 1:
            name = parts[2] if len(parts) > 2 and parts[2] not in _CONTACT_ASPECTS else None
            if name is None and (said := _CONTACT_IS.search(memory.content) or re.search(
                    rf"\b{re.escape(parts[1])}\s+(?P<name>(?-i:[A-Z][\w'-]+)(?:\s+(?-i:[A-Z][\w'-]+)){{0,2}})",
                    memory.content, re.I)):
                # "The user's wife is Temitope", "The user's assistant Lerato Mokoena does dispatch"
                name = re.sub(r"'s$", "", said.group("name")).casefold()
            known.add((parts[1], name))
    return known


_CONTACT_ASPECTS = frozenset("phone email address".split())
_CONTACT_IS = re.compile(r"\bis\s+(?P<name>(?-i:[A-Z][\w'-]+)(?:\s+(?-i:[A-Z][\w'-]+)){0,2})\s*(?:\(|$)")


def _named_known_contact(known: set[tuple[str, str | None]], text: str) -> tuple[str, str | None] | None:
    """The one known contact `text` names, by a word for their relation ("Mum") or their (first) name ("Timur");
    None for none or more than one."""
    if not known:
        return None
    words = {re.sub(r"'s$", "", word.casefold()) for word in re.findall(r"[^\W\d_][\w'-]*", text)}  # "Tem's"
    named = {(relation, name) for relation, name in known
             if (name and name.split()[0] in words) or any(
                 lexicon.CONTACT_RELATIONS.get(word, ("",))[0] == relation for word in words)}
    relations = {relation for relation, _ in named}
    if len(relations) != 1:
        return None
    relation, name = sorted(named, key=lambda contact: contact[1] is None)[0]
    return relation, name.title() if name else None


_THIRD_PERSON_POSSESSIVE = re.compile(r"\b(?P<pronoun>his|her|their)\b", re.I)


# "our cleaner", "the new tenant", "a colleague": someone the message itself may mean by "her"; details are not anyone.
_SOMEONE_SAID = re.compile(r"\b(?:my|our|the|a|an|this|that)\s+(?!(?:own|new|old|current|number|phone|mobile|landline"
                           r"|e-?mail|address|details?|info|information|data|account|records?|file|system|contact)\b)"
                           r"[a-z][\w-]*", re.I)


def _may_name_someone(text: str) -> bool:
    """Whether a message may name the one its "her" means: a noun phrase of a person's kind ("our cleaner"), or a
    capitalised word inside a sentence ("... Maria has left us")."""
    if _SOMEONE_SAID.search(text):
        return True
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        words = re.findall(r"[\w'-]+", sentence)
        if any(word[:1].isupper() and word != "I" and not word.startswith("I'") for word in words[1:]):
            return True
    return False


def _only_known_contact(known: set[tuple[str, str | None]], text: str) -> tuple[str, str | None] | None:
    """The known contact a message naming no one means by "his", "her" or "their" ("we split up, please get rid of
    his number") when exactly one of the user's contacts fits the pronoun; None for none or several, or for a message
    using more than one of them."""
    pronouns = {match.group("pronoun").lower() for match in _THIRD_PERSON_POSSESSIVE.finditer(text)}
    if len(pronouns) != 1 or _may_name_someone(text):
        return None
    pronoun = pronouns.pop()
    fitting = {(relation, name) for relation, name in known if pronoun_fits(pronoun, relation)}
    if len({relation for relation, _ in fitting}) != 1 or len({name for _, name in fitting if name}) > 1:
        return None
    relation, name = sorted(fitting, key=lambda contact: contact[1] is None)[0]
    return relation, name.title() if name else None


def _message_candidates(item: _Message, person: Person, talked_about: tuple[str, str | None] | None = None, *,
                        offer: str = "", people: tuple[tuple[str, str], ...] = (),
                        retiring: list[Retired] | None = None) -> list[Candidate | PendingStatement]:
    """The candidates of one message; `offer`, the agent's message just before a user's, for what it accepts;
    `people`, the user's people named so far, (relation, name), for what the message says of them; `retiring`, old
    values a change names (changes.retired_values), handed to the message's new facts: what none took is left in it."""
    message = item.message
    base = RuleContext(seq=message.seq, role=message.role, person=person,
                       reference=message.created_at.date() if message.created_at else None,
                       lowercase=item.lowercase, people=people)
    found: list[Candidate | PendingStatement] = []
    opening = not asks_someone_elses_name(offer)  # "Your father's name?" - "Zbigniew Kowalczyk." is not the user's
    contact = None  # the contact the user last named in this message, for "his number is ..."
    asks_to_confirm = message.role == "assistant" and asks_to_confirm_reading(message.text or "")
    admitted_error = False  # the user's sentence before said something was wrong: "X, not Y" next corrects it
    named_here: list[tuple[str, str]] = []  # the user's people this message has named so far ("my son Thiago")
    named_someone = False  # an earlier sentence named someone of the user's ("My stand-in Joanne Pike covers ...")
    device_said = _last_device(offer, agent=True)  # the device "it" may be: "What car is it?" / "It's a Volvo XC40"
    retiring = [] if retiring is None else retiring
    for line in item.lines:
        labelled = key_value_line(line.text, base)
        if labelled is not None:
            found += labelled + identifiers(line.text, base, confidence=0.85)
            opening = False
            continue
        for sentence in line.sentences:
            said_before = len(found)
            retiring += retired_values(sentence.text)
            ctx = dataclasses.replace(base, opening=opening)
            opening = opening and not sentence.clauses
            if message.role == "user":
                # A contact named in an earlier message (or the one known) is reached by "delete her number" only.
                resolved = (with_pronouns_resolved(sentence.text, contact) if contact else
                            with_pronouns_resolved(sentence.text, talked_about, requests_only=True))
                if device_said and (product := _IT_IS_PRODUCT.match(resolved)):  # "It's a Worcester Bosch 30i."
                    resolved = f"My {device_said} is {resolved[product.end('it'):].lstrip()}"
                device_said = _last_device(sentence.text) or device_said
                if resolved != sentence.text:
                    sentence = _Sentence(text=resolved, clauses=split_clauses(resolved))
                named_after = relations_email(sentence.text, ctx) or contact_named_after_mention(sentence.text, contact,
                                                                                                ctx)
                named_before = contact
                contact = mentioned_contact(sentence.text) or contact
                stated = named_after + _user_sentence(
                    sentence, dataclasses.replace(ctx, sentence=sentence.text, last_named=named_before,
                                                  people=(*named_here, *ctx.people)),
                    after_admitted_error=admitted_error)
                named_here += people_named(sentence.text)
                admitted_error = bool(_ADMITS_ERROR.search(sentence.text))
                found += stated + contacts_named_in_passing(sentence.text, ctx, stated) + children_named(sentence.text, ctx)
                if named_after := relation_named_after(sentence.text):
                    found += contacts_named_in_passing(named_after, ctx, stated)
                someone_named = contact is not None or named_someone or any(
                    (getattr(said, "subject", None) or "").startswith("contact:") for said in found)
                named_someone = named_someone or names_someone(sentence.text)
                found += unclaimed_phones(sentence.text, sentence.clauses, ctx, found, someone_named=someone_named)
                found += unclaimed_addresses(sentence.text, sentence.clauses, ctx, found, someone_named=someone_named,
                                             around=f"{offer}\n{message.text}")
                found += unclaimed_identifiers(sentence.text, ctx, found, asked=offer, message=message.text)
            else:
                restated = _restated(sentence, ctx, asks_to_confirm=asks_to_confirm)
                updated = bool(restated) and agent_update_as_customer(sentence.text) is not None
                clause_outcomes = []
                for clause in sentence.clauses:
                    if clause.uncertain and _WHEN_DONE.match(sentence.text) and not uncertain_in_itself(
                            _WHEN_DONE_CLAUSE.sub("", clause.text)):
                        clause = dataclasses.replace(clause, uncertain=False)  # "Once it arrives, we'll refund £349"
                    # "I've updated your mobile to ...": the customer's new value, not also an episode saying so
                    done = [] if updated else (outcomes(clause, ctx) or booking(clause, ctx)
                                               or confirmed_change(clause, ctx))
                    clause_outcomes += done
                    # "The card ending 4821 has been deleted": what a removal names is not stated again
                    found += done + ([] if any(candidate.action == "delete" for candidate in done)
                                     else identifiers(clause.text, ctx, confidence=0.85))
                if message.role == "assistant":
                    found += agent_assigned_contacts(sentence.text, ctx)  # "David is now set up as a trusted contact"
                if not (updated or clause_outcomes or restated) and message.role == "assistant":
                    found += done_report(sentence.text, ctx)  # "Done: push notifications are off": the whole report
                    found += _noted(sentence.text, ctx)
                found += restated
            if retiring and _carry_retired(found[said_before:], retiring):
                retiring.clear()
    if message.role == "user" and offer:
        found += accepted_offer(normalise_text(offer), normalise_text(message.text), base)
    return found


# "My boiler's stopped working. It's a Worcester Bosch Greenstar 30i.": the device named last is what "it" is.
_DEVICE_WORD = re.compile(rf"\b(?P<owner>my|our|your|what|which|the)\s+(?:[a-z-]+\s+)?(?P<kind>{'|'.join(map(re.escape, lexicon.DEVICE_KINDS))})"
                          r"(?:'s)?\b", re.I)
_IT_IS_PRODUCT = re.compile(r"^(?P<it>it's|it\s+is|its)\s+(?=an?\s+(?:[a-z-]+\s+){0,2}(?:\d{4}\s+)?(?-i:[A-Z])[\w+!.-]*"
                            r"(?:\s+(?-i:[A-Z0-9])[\w+!.-]*){1,4})", re.I)


def _carry_retired(said: list, retiring: list[Retired]) -> bool:
    """Hand the old values a change names ("Tuesdays instead of Wednesdays", "the test centre cancelled the 14 May
    session") to the new facts said with it or after it in the message, whose memories then supersede the notes
    naming them (consolidation). Identifiers and contact details replace nothing by name."""
    carriers = [item for item in said if isinstance(item, PendingStatement) or item.action == "add" and not (
        str(item.metadata.get("rule", "")).startswith("identifier") or _is_contact_detail(item))]
    for item in carriers:
        if isinstance(item, PendingStatement):
            item.retires = tuple(dict.fromkeys([*item.retires, *retiring]))
        else:
            known = [tuple(pair) for pair in item.metadata.get("retires", [])]
            item.metadata["retires"] = [list(pair) for pair in dict.fromkeys([*known, *retiring])]
    # a statement may yet be judged not worth keeping (salience): the old values stay for what comes after it too
    return any(isinstance(item, Candidate) for item in carriers)


def _last_device(text: str, *, agent: bool = False) -> str | None:
    """The device a customer's text calls theirs last ("my boiler"), or that the agent's asks about ("What car is
    it?"); "the other car" is no one's."""
    owners = ("your", "what", "which", "the") if agent else ("my", "our")
    said = [match for match in _DEVICE_WORD.finditer(text or "") if match.group("owner").lower() in owners]
    return said[-1].group("kind").lower() if said else None


def _restated(sentence: _Sentence, ctx: RuleContext, *, asks_to_confirm: bool = False) -> list[Candidate]:
    """Facts in the agent's restatement about the customer ("Your address is now ..."), trusted a little less. A
    reading of what is on file that the agent asks the customer to confirm ("I have you at 3 Old Road. Is that still
    correct?") is the customer's only once they say yes (dialogue.confirmation_asked), never before: "No, we moved"."""
    if ctx.role != "assistant" or not (as_customer := (None if asks_to_confirm else agent_readback_as_customer(sentence.text))
                                       or agent_statement_as_customer(sentence.text, sentence.clauses)
                                       or agent_update_as_customer(sentence.text)):
        return []
    found = []
    for clause in split_clauses(as_customer):  # the text is normalised already, and "you" -> "I" moves clause breaks
        for candidate in _user_clause(clause, dataclasses.replace(ctx, hedged=clause.hedged)):
            if candidate.action == "add" and candidate.subject and not candidate.subject.startswith("identifier:"):
                candidate.confidence = round(candidate.confidence * AGENT_RESTATEMENT_FACTOR, 2)
                candidate.metadata["restated_by_agent"] = True
                found.append(candidate)
    for candidate in contacts_named_in_passing(as_customer, ctx, found):  # "Your coordinator is now Sam Ito"
        candidate.confidence = round(candidate.confidence * AGENT_RESTATEMENT_FACTOR, 2)
        candidate.metadata["restated_by_agent"] = True
        found.append(candidate)
    return found


def _noted(sentence: str, ctx: RuleContext) -> list[Candidate]:
    """What the agent says it has noted on the customer's record ("I've noted that you'd like texts rather than calls",
    "I've added to your record: ground floor rooms only"): the customer's fact where a rule reads it in their words,
    else the note as the agent put it (one the batch says already is dropped later: _without_notes_said_already)."""
    notes = []
    for what, whole_clause in agent_notes(sentence):
        if whole_clause and not speaks_of_itself(what):
            typed = [candidate for clause in split_clauses(in_first_person(what))
                     for candidate in _user_clause(clause, ctx)
                     if candidate.action == "add" and candidate.subject and not candidate.subject.startswith("identifier:")]
            if typed:
                for candidate in typed:
                    candidate.confidence = round(candidate.confidence * AGENT_RESTATEMENT_FACTOR, 2)
                    candidate.metadata["restated_by_agent"] = True
                notes += typed
                continue
        said = rewrite_second_person(what, ctx.person)
        content = (ctx.person.starting(said[:len(ctx.person.label)].lower() + said[len(ctx.person.label):])
                   if said.casefold().startswith(ctx.person.label)
                   else f"Noted on {ctx.person.possessive} record: {said}")
        if not _said_already(said, notes):
            notes.append(ctx.candidate(content, confidence=0.75, rule="support.noted", tags=("support",),
                                       metadata={"restated_by_agent": True}))
    return notes


_WORD = re.compile(r"[^\W_][\w'@.+-]*[^\W_]|\d")
_NOT_NEWS = frozenset("the user user's their they them and for with that this from only all any our your has have noted record "
                      "assistant support update "
                      "are was will would to of on in at by a an is be as it its not no".split())


def _agent_contacts_merged(candidates: list[Candidate], existing: list[ExistingMemory]) -> list[Candidate]:
    """The contact the agent says it set up ("David is now set up as a trusted contact") is the person the customer
    named already ("my son, David Pembury, ..."): their memory gains the role rather than a second memory standing
    beside it; one already holding the role, or known from an earlier session with it, needs nothing more."""
    kept = []
    for candidate in candidates:
        if candidate.metadata.get("rule") != "contact.assigned_by_agent":
            kept.append(candidate)
            continue
        first = str(candidate.metadata["name"]).split()[0].casefold()
        role = str(candidate.metadata["relation"])
        same = [other for other in candidates if other is not candidate and other.action == "add"
                and (other.subject or "").startswith("contact:") and first in _name_tokens(other.content)]
        if any(first in _name_tokens(memory.content) and role in memory.content.casefold() for memory in existing):
            continue
        if not same:
            kept.append(candidate)
            continue
        holder = same[0]
        if role not in holder.content.casefold():
            holder.content = f"{holder.content}, their {role}"
        for detail in ("phone", "email"):
            if candidate.metadata.get(detail) and candidate.metadata[detail] not in holder.content:
                holder.content = f"{holder.content} ({candidate.metadata[detail]})"
                holder.metadata.setdefault(detail, candidate.metadata[detail])
        holder.source_seqs = sorted({*holder.source_seqs, *candidate.source_seqs})
    return kept


def _name_tokens(text: str) -> set[str]:
    return {word.casefold() for word in re.findall(r"[^\W\d_][\w-]*", text)}


def _codes_read_elsewhere(candidates: list[Candidate], existing: list[ExistingMemory]) -> list[Candidate]:
    """A code kept only because no rule read it (identifiers.unclaimed_identifiers) goes where a memory on file, a
    statement the salience classifier kept or a later rule holds it ("hi, marco here, MV-2207": known already)."""
    held = [_squashed(item.content) for item in [*candidates, *existing]
            if item.__class__ is ExistingMemory or item.metadata.get("rule") != "identifier.unclaimed"]
    return [candidate for candidate in candidates
            if candidate.metadata.get("rule") != "identifier.unclaimed"
            or not any(_squashed(candidate.metadata["identifier"]) in content for content in held)]


def _squashed(text: str) -> str:
    return re.sub(r"[\s-]+", "", text).casefold()


def _without_notes_said_already(candidates: list[Candidate]) -> list[Candidate]:
    """The agent's notes and reports (support.noted, support.outcome.done) that say what no other candidate of the
    batch says: "Noted: calls after 3pm only" adds nothing to the customer's own "only ring me after 3pm", and would
    stay behind when that changes."""
    others = [candidate for candidate in candidates if candidate.metadata.get("rule") not in _REPORTS]
    return [candidate for candidate in candidates
            if candidate.metadata.get("rule") not in _REPORTS or _CHANGES_WHAT_WAS.search(candidate.content)
            or not _said_already(candidate.content, others, share=_SHARE.get(candidate.metadata["rule"], 0.4))]


# An action is an event of its own: only one mostly made of what another memory says goes ("set up your membership,
# number FF-118206" beside the membership number), not "logged a complaint, reference CMP-7781" beside the reference.
_SHARE = {"support.outcome.action": 0.5, "support.outcome.result": 0.5}


# A report that changes what another memory says ("moved the gas safety check to Friday") is news however alike.
_CHANGES_WHAT_WAS = re.compile(r"\b(?:moved|rescheduled|pushed\s+back|brought\s+forward|cancell?ed|changed|extended"
                               r"|renewed|replaced|upgraded|downgraded|switched)\b", re.I)


_REPORTS = ("support.noted", "support.outcome.done", "support.outcome.action", "support.outcome.result")


def _said_already(said: str, found: list, *, share: float = 0.4) -> bool:
    """Whether one of the candidates `found` is about the same thing as `said`: it shares a `share` of the words that
    carry it (compared by their first five letters: "mornings" is "morning") and every figure in it."""
    words = _stems(said)
    if not words:
        return True
    figures = set(_FIGURE.findall(PHONE_SHAPED.sub(" ", said)))  # an amount, a date or a reference the other must hold
    return any(len(words & _stems(candidate.content)) >= share * len(words)
               and figures <= set(_FIGURE.findall(candidate.content)) for candidate in found
               if isinstance(candidate, Candidate) and candidate.action == "add")


_FIGURE = re.compile(r"[\w.,£€$-]*\d[\w.,-]*")  # "£349", "PC-90117", "24": a phone number's groups aside


def _stems(text: str) -> set[str]:
    return {word.casefold()[:5] for word in _WORD.findall(text)
            if word.casefold() not in _NOT_NEWS and not word.isdigit()}  # "07825 441 360" is no three words


# "My name is Rajinder Singh Bhogal, of 27 Elmfield Road, ..." reads the same as the bare sign-up line.
_NAME_THEN_ADDRESS = re.compile(r"^(?:(?i:my\s+name\s+is|I'm|I\s+am|this\s+is)\s+)?(?P<name>(?-i:[A-Z][\w'.-]*)(?:\s+(?-i:[A-Z][\w'.-]*)){1,3}),"
                                r"\s+(?:(?i:of|from|at)\s+)?(?P<address>\d{1,5}[A-Za-z]?\s+"
                                r"(?-i:[A-Z])[^,;]+(?:,\s*[^,;]+){0,3})$")
_NOT_SIGNATURE_WORDS = frozenset("dear hi hello hey thanks thank morning evening afternoon good support team customer "
                                 "service sir madam all".split())
# "I copied Imran's number wrongly. It is 07700 900 462, not 426.": the apology is in the sentence before.
# Only the user's own mistake: "the letter had my name spelt wrong. It said Jonson, not Johnson." is a complaint.
_ADMITS_ERROR = re.compile(r"\b(?:I|I've|I\s+have|I\s+had)\s+(?:[\w'-]+\s+){0,6}?(?:wrong(?:ly)?|incorrect(?:ly)?|by\s+mistake"
                           r"|a\s+mistake|mis(?:typed|spelt|spelled|read|heard|wrote)|mixed\s+(?:it\s+|them\s+)?up)\b"
                           r"|\bmy\s+(?:mistake|bad|typo|error)\b", re.I)
# What may follow the admission as the corrected value: "it is ...", "that's ...", "it should be ...".
_CORRECTED_VALUE = re.compile(r"^(?:it's|it\s+is|that's|that\s+is|it\s+should\s+be|the\s+(?:right|correct)\s+(?:one|\w+)"
                              r"\s+is)\b", re.I)


def _read_unless_corrected(text: str, fix: Candidate, ctx: RuleContext, stated: str | None = None) -> list[Candidate]:
    """What the correcting sentence states of itself (or `stated`, its restatement), for apply_corrections to keep if
    the correction finds nothing to correct: only the facts the rules read, never a statement for the salience
    classifier."""
    stated = stated or corrected_statement(text, fix)
    if not stated or correction(stated, ctx) is not None:
        return []
    found = [candidate for candidate in _user_sentence(_Sentence(text=stated, clauses=split_clauses(stated)), ctx)
             if isinstance(candidate, Candidate) and candidate.action == "add"
             and "correction" not in candidate.metadata]
    for candidate in found:
        candidate.metadata[UNLESS_CORRECTED] = fix.metadata["correction"]["id"]
    return found


def _user_sentence(sentence: _Sentence, ctx: RuleContext, *, after_admitted_error: bool = False,
                   ) -> list[Candidate | PendingStatement]:
    if signed := sign_off_name(sentence.text, ctx.person.known):  # "Regards, Beatriz Santos"
        return _user_clause(Clause(text=f"My name is {signed}", question=False, uncertain=False, hedged=False), ctx)
    if restated := wrong_then_right(sentence.text):  # "my email is wrong on the booking, it should be a@x.com"
        return _user_sentence(_Sentence(text=restated, clauses=split_clauses(restated)), ctx)
    if recorded := recorded_then_right(sentence.text):  # "you've got my surname as Smyth, it's Smith"
        restated, old_value, new_value = recorded
        fix = correction_marker(ctx, new=new_value, old=old_value)
        return [fix, *_read_unless_corrected(sentence.text, fix, ctx, stated=restated)]
    apologised = after_admitted_error and _CORRECTED_VALUE.match(sentence.text)
    if (fix := correction(f"Sorry, {sentence.text}" if apologised else sentence.text, ctx)) is not None:
        return [fix, *_read_unless_corrected(sentence.text, fix, ctx)]
    # "I made a mistake with my phone number last time, it is ... 2814, not 2841": the admission in the same sentence
    admission = _ADMITS_ERROR.search(sentence.text)
    if admission and (rest := re.split(r"[,;:]\s+", sentence.text[admission.end():], maxsplit=1)[1:]) and (
            _CORRECTED_VALUE.match(rest[0])) and (fix := correction(f"Sorry, {rest[0]}", ctx)) is not None:
        return [fix]
    if mid := split_mid_correction(sentence.text):  # "send them to a@x.com, no sorry, it's b@x.com"
        before, old_value, new_value = mid
        corrected = before.replace(old_value, new_value)
        return _user_sentence(_Sentence(text=corrected, clauses=split_clauses(corrected)), ctx)
    command = sentence_command(sentence.text, sentence.clauses, ctx, _user_clause)
    if command is not None:
        return command
    if (signed := _NAME_THEN_ADDRESS.match(sentence.text.rstrip(" ."))) and not _NOT_SIGNATURE_WORDS.intersection(
            signed.group("name").lower().split()) and (ctx.person.known or signed.group("name")).casefold() == \
            signed.group("name").casefold():  # once their name is known, another name's line is someone else's
        # "Ruairí Ó Dálaigh, 58 Sallowmere Road, Galway H91 X2C4": a sign-up line, read as what it stands for; the
        # address must be all that follows ("3 Elm Street is my address" is a sentence, not a line of details)
        stated = [candidate for text in (f"My name is {signed.group('name')}", f"My address is {signed.group('address')}")
                  for candidate in _user_clause(Clause(text=text, question=False, uncertain=False, hedged=False), ctx)]
        if {candidate.subject for candidate in stated} >= {"name", "address:home"} and any(
                candidate.metadata.get("value") == signed.group("address") for candidate in stated):
            return stated
    # "no pork in anything please": read whole, since a clause loses its leading "no" as an answer word
    found: list[Candidate | PendingStatement] = [
        candidate for part in re.split(r"[,;]\s*|\s+(?:so|and)\s+(?=no\b)", sentence.text) for candidate in nothing_wanted(ctx, part)]
    found += renewed_identifiers(sentence.text, ctx)
    for clause in [part for said in sentence.clauses for part in _and_now(said)]:
        clause_ctx = dataclasses.replace(ctx, hedged=clause.hedged)
        if (remembered := clause_remember(clause.text, clause_ctx, _user_clause)) is not None:
            found += remembered
            continue
        stated = _user_clause(clause, clause_ctx)
        # No rule recognised it (a number plate in passing is not what it says: "I've got a new trailer now, reg
        # LP24 WHA", unlike "my registration is ..."): the salience classifier decides, per batch.
        if all((candidate.subject or "").startswith("identifier:plate:") for candidate in stated) and not (
                stated and _PLATE_STATED.match(clause.text)) and (
                statement := _statement(clause, clause_ctx)):
            found.append(statement)
        elif stated and all(_is_value_only(candidate) for candidate in stated):
            found += _beside_values(clause, clause_ctx, stated)
        found += stated
    return found


# "I left Halden Bank in May and now work for Corvo": what is now, said after "and now", is a clause of its own.
_AND_NOW = re.compile(r"^(?P<first>(?:I|we)\b.+?),?\s+and\s+(?:I\s+|we\s+)?now\s+(?P<verb>work|live|use|run|own|have|teach|study"
                      r"|rent|bank|shop|drive)\b(?P<rest>.+)$", re.I)


def _and_now(clause: Clause) -> list[Clause]:
    if not (match := _AND_NOW.match(clause.text)):
        return [clause]
    subject = match.group("first").split()[0]
    now = f"{subject} now {match.group('verb')}{match.group('rest')}"
    return [dataclasses.replace(clause, text=match.group("first")), dataclasses.replace(clause, text=now)]


_CONTACT_SUBJECTS = ("phone", "email", "address")


def _is_value_only(candidate: Candidate) -> bool:
    """A candidate that took a value out of its clause (an identifier, a phone number, an email address), not what
    the clause says."""
    return (candidate.subject or "").startswith("identifier:") or _is_contact_detail(candidate) and (
        candidate.subject or "").split(":")[0] in ("phone", "email")


_PARTS = re.compile(r"\s*[,;]\s+")


def _beside_values(clause: Clause, ctx: RuleContext, stated: list[Candidate]) -> list:
    """What a clause says beside the values its rules took ("Policy PET-7781-204, the dog is Biscuit", "07512 664
    038, whatsapp is better than calls"): each comma-separated part holding none of them, read on its own."""
    parts = _PARTS.split(clause.text)
    if len(parts) < 2:
        return []
    values = [_comparable(str(candidate.metadata.get("identifier") or candidate.metadata.get("value") or ""))
              for candidate in stated]
    found: list = []
    for part in parts:
        if OWNED_BY_RULES.search(part) or any(value and value in _comparable(part) for value in values):
            continue
        # The part's own marks: "I'd like an eSIM, phone is an iPhone 15 Pro, IMEI ..." is no wish about the phone.
        # A conditional sentence ("If I move, my address would be ...") leaves every part uncertain.
        conditional = clause.uncertain and not uncertain_in_itself(clause.text)
        said = dataclasses.replace(clause, text=part, hedged=False,
                                   uncertain=conditional or clause.uncertain and uncertain_in_itself(part))
        found += _user_clause(said, ctx) or [statement for statement in [_statement(said, ctx)] if statement]
    return found


def _statement(clause: Clause, ctx: RuleContext) -> PendingStatement | None:
    """A clause no rule recognised, to be scored: the user's own statement, else one about a person of theirs named
    in it ("Dana is 13": "My daughter Dana is 13"), else one about their things without a first person."""
    own = pending_statement(clause, ctx)
    if own is not None and not own.third_person:
        return own
    return statement_about_someone(clause, ctx) or own


def _user_clause(clause: Clause, ctx: RuleContext) -> list[Candidate]:
    """The facts in one user clause. Identifiers count even in questions ("Where is order #123?")."""
    found = _clause_facts(clause, ctx)
    restated = new_value_statement(clause.text)
    if restated and restated != clause.text and any(_is_contact_detail(candidate) for candidate in found):
        # "I got a new phone and the number is now ...": the clause gives the number, not a device
        return [candidate for candidate in found if _is_contact_detail(candidate) or (
            candidate.subject or "").startswith("identifier:")]
    if restated and restated != clause.text and not any(
            covers(subject, candidate.subject) for candidate in found for subject in _CONTACT_SUBJECTS):
        # "new phone as well, 07457 118 903", "from 20 March my address will be ...": the plain statement
        again = _clause_facts(dataclasses.replace(clause, text=restated), ctx)
        if any(covers(subject, candidate.subject) for candidate in again for subject in _CONTACT_SUBJECTS):
            kept = {candidate.subject for candidate in again}
            return again + [candidate for candidate in found if candidate.subject and candidate.subject.startswith(
                "identifier:") and candidate.subject not in kept]
    return found


# The agent's "once ...", "when ...": a time it will act at, not a condition that may not hold.
_WHEN_DONE = re.compile(r"^(?:once|as\s+soon\s+as|when)\b", re.I)
_WHEN_DONE_CLAUSE = re.compile(r"^(?:once|as\s+soon\s+as|when)\b[^,]{3,80},\s*", re.I)
_PLATE_STATED = re.compile(r"^(?:my|our|the)\s+(?:[\w']+\s+)?(?:registration|reg|plate|number\s+plate)(?:\s+number)?\s+is\b",
                           re.I)


def _is_contact_detail(candidate: Candidate) -> bool:
    return any(covers(subject, candidate.subject) for subject in _CONTACT_SUBJECTS)


def _clause_facts(clause: Clause, ctx: RuleContext) -> list[Candidate]:
    ids = identifiers(clause.text, ctx)
    if len(clause.text) > MAX_CLAUSE_CHARS:
        return ids + contacts(clause, ctx)
    retracted = clause_retraction(clause, ctx) or _taken_back(clause, ctx)
    if retracted:
        return retracted + ids  # "My email is no longer a@b.com" retracts the address, it does not state it
    incidental = ids + contacts(clause, ctx)
    reaching = support_clause(clause, ctx)  # contacts, addresses, contact preferences: before the general rules
    if reaching:
        return reaching + incidental
    if (standing := standing_request(clause.text)) is not None:
        # "can you text me instead of emailing going forward?": how they want it done from now on
        return _clause_facts(dataclasses.replace(clause, text=standing, question=False, uncertain=False),
                             ctx) or incidental
    if clause.question:
        return incidental
    if clause.uncertain:
        # "If it can't be fixed, take it to our garage, Whitmore Motors": the business they call theirs is theirs
        # whatever the condition
        if provider := named_provider(ctx, clause.text):
            return provider + incidental
        # "I'd like the alerts weekly, not daily": a wish about how they are served is a preference; any other
        # conditional or wishful clause states nothing
        if not _STANDING_WISH.match(clause.text) or uncertain_in_itself(_STANDING_WISH.sub("", clause.text)) or (
                conditional_sentence(ctx.sentence)) or ONE_OFF.search(ctx.sentence or clause.text):
            return incidental  # "... just for this month", "... this time": not how they want it from now on
        for rule in PREFERENCE_RULES:
            if stated := rule(ctx, clause.text):
                return stated + incidental
        return incidental
    for rule in USER_FACT_RULES:
        stated = rule(ctx, clause.text)
        if stated:
            return stated + incidental
    return incidental


# "I'm not allergic to sesame after all", "I don't have diabetes anymore": a fact taken back, found by reading the
# statement it negates ("I'm allergic to sesame") with the same rules; a plain negation ("I'm not allergic to nuts")
# takes nothing back.
_TAKEN_BACK = re.compile(
    r"^I(?:'m|\s+am)\s+(?:not|no\s+longer)\s+(?P<being>.+?)(?P<end>\s+(?:after\s+all|any\s?more|any\s+longer))?$"
    r"|^I\s+(?:don't|do\s+not|no\s+longer)\s+have\s+(?P<having>.+?)(?P<end2>\s+(?:after\s+all|any\s?more|any\s+longer))?$",
    re.I,
)


def _taken_back(clause: Clause, ctx: RuleContext) -> list[Candidate]:
    match = _TAKEN_BACK.match(clause.text.rstrip(" .!"))
    if not match or clause.question or clause.uncertain or not (
            match.group("end") or match.group("end2") or "no longer" in clause.text.lower()):
        return []
    positive = f"I'm {match.group('being')}" if match.group("being") else f"I have {match.group('having')}"
    stated = _clause_facts(Clause(text=positive, question=False, uncertain=False, hedged=False), ctx)
    return [ctx.candidate(f"{ctx.person.label} took back: {rewrite_first_person(positive, ctx.person)}",
                          confidence=0.85, rule="retract.statement", subject=candidate.subject, tags=("retraction",),
                          action="delete")
            for candidate in stated if candidate.action == "add" and candidate.subject
            and not candidate.subject.startswith(("identifier:", "name"))]


_NEW_CONTACT = re.compile(r"\bnew\s+(?:[\w-]+\s+){0,2}?(?P<noun>(?:phone|mobile|cell)(?:\s+number)?|number|e-?mail"
                          r"(?:\s+address)?)\b", re.I)
_WILL_BE = re.compile(r"^(?P<head>.*?\b(?:my|our)\s+(?:[\w-]+\s+)?(?:address|number|phone|mobile|e-?mail"
                      r"(?:\s+address)?))\s+(?:will\s+be|is\s+going\s+to\s+be|has\s+changed\s+to|changed\s+to"
                      r"|is\s+changing\s+to)\s+(?P<value>.+)$", re.I)


def new_value_statement(text: str) -> str | None:
    """A new contact value given in passing ("new email as well: x@y.z", "I got a new phone and the number is now
    ...") or a value that will change ("from 20 March my address will be ...") as "my <thing> is <value>"."""
    if match := _WILL_BE.match(text):
        head = re.sub(r"^(?:from|as\s+of|starting|on|after)\b[^,]*?(?=\b(?:my|our)\b)|^.*?,\s*(?=(?:my|our)\b)", "",
                      match.group("head"), flags=re.I)
        return f"{head} is {match.group('value')}"
    match = _NEW_CONTACT.search(text)
    if not match:
        return None
    noun = match.group("noun").lower()
    email = noun.startswith(("email", "e-mail"))
    value = (EMAIL if email else PHONE).search(text, match.end())
    if not value:
        return None
    return f"my {'email address' if email else 'phone number'} is {value.group(0).strip()}"


# "on the TV, not on her phone", "the Duo plan rather than Family", "on my laptop instead of the app": the
# alternative turned down, at the end of what is kept.
_REJECTED_ALTERNATIVE = re.compile(r"(?:,\s*not|,?\s+(?:rather\s+than|instead\s+of))\s+(?!only\b|just\b|even\b|yet\b)"
                                   r"[^,;()]{1,60}$"
                                   # "a team of 12 now, it was 8 last year": what was, after what is
                                   r"|,\s*(?:it|that|this|there|they)\s+(?:was|were|used\s+to\s+be)\b[^,;()]{0,60}$", re.I)


_WISHED = re.compile(r"\b(?:likes?|liked|prefers?|preferred|wants?|wanted|wishes|rather|would|'d)\b", re.I)


def _without_rejected_alternatives(candidates: list[Candidate]) -> None:
    """A fact says what is, not what was turned down beside it ("my date of birth is 4 March 1988, not 1989 like it
    says on my profile"): the value ruled out stays out of an active memory (the change rules, changes.retired_values,
    read it to retire an old value that holds it). A preference keeps both sides: "by email, not phone" says what not
    to do as well."""
    for candidate in candidates:
        rule = candidate.metadata.get("rule", "")
        if candidate.action == "add" and not rule.startswith(("preference", "correction")) and (
                cut := _REJECTED_ALTERNATIVE.search(candidate.content)) and (
                rule == "statement" or rule.startswith("business.") or not _WISHED.search(candidate.content[:cut.start()])) and len(
                candidate.content[:cut.start()].split()) >= 4:
            candidate.content = candidate.content[:cut.start()].rstrip(" ,")


def _add_resolved_dates(candidates: list[Candidate]) -> None:
    """A kept date phrase is followed by the date it resolves to: "... next Friday (2026-03-20)"."""
    for candidate in candidates:
        if candidate.action != "delete":
            candidate.content = with_resolved_date(candidate.content, candidate.metadata)


def _merge_duplicates(candidates: list[Candidate]) -> list[Candidate]:
    """The same statement made twice in a batch is one candidate citing both messages."""
    merged: list[Candidate] = []
    seen: dict[tuple, Candidate] = {}
    for candidate in candidates:
        key = (candidate.action, candidate.subject, candidate.target_memory_id, normalise_content(candidate.content))
        kept = seen.get(key)
        if kept is None:
            seen[key] = candidate
            merged.append(candidate)
            continue
        kept.source_seqs = sorted({*kept.source_seqs, *candidate.source_seqs})
        kept.confidence = max(kept.confidence, candidate.confidence)
        kept.tags = kept.tags + [tag for tag in candidate.tags if tag not in kept.tags]
        kept.metadata = {**candidate.metadata, **kept.metadata}
    return merged


def _without_mentions_of_own_emails(candidates: list[Candidate]) -> list[Candidate]:
    """"The user gave the email address X" says nothing more once the batch says whose X is: the user's own ("What's
    your email?" / "Fatima El Amrani, fz@example.nl") or a contact's ("Our buyer is Sam Okafor, sam@example.com")."""
    own = {str(candidate.metadata["value"]).casefold() for candidate in candidates
           if candidate.action == "add" and candidate.metadata["rule"] == "contact.email"}
    own |= {str(candidate.metadata["email"]).casefold() for candidate in candidates
            if candidate.action == "add" and (candidate.subject or "").startswith("contact:")
            and candidate.metadata.get("email")}
    return [candidate for candidate in candidates if not (
        candidate.metadata["rule"] == "contact.email_mentioned" and any(email in candidate.content.casefold()
                                                                        for email in own))]


def _origin_beside_home(candidates: list[Candidate]) -> list[Candidate]:
    """"I'm from Lyon" is the user's location unless the same batch also says where they live now."""
    lives = any(candidate.subject == "location" and candidate.action == "add"
                and candidate.metadata["rule"] != "identity.location.from" for candidate in candidates)
    if lives:
        for candidate in candidates:
            if candidate.metadata["rule"] == "identity.location.from":
                candidate.subject = "hometown"
    return candidates


def _values_in(content: str) -> set[str]:
    """The email addresses and phone numbers in `content`, case-folded."""
    return {match.group(0).strip().casefold() for pattern in (EMAIL, PHONE) for match in pattern.finditer(content)}


def _honour_forgets(candidates: list[Candidate], existing: list[ExistingMemory]) -> list[Candidate]:
    """Nothing in the batch may store again what a forget request in it (or the agent's removal: "I've removed Sam
    from our records") takes away: not an earlier statement of the value, and not the agent confirming "I've removed
    07700 900 123 from your file"."""
    forgets = [(index, candidate) for index, candidate in enumerate(candidates) if candidate.action == "delete"
               and (candidate.metadata.get("rule") == "retract.forget" or candidate.metadata.get("rule") == "support.removed"
                    and candidate.metadata.get("value"))]
    if not forgets:
        return candidates
    scrubbed: set[str] = set()
    for position, forget in forgets:
        if forget.metadata.get("refers_back"):  # "take it off my file": the thing just said
            earlier = [c for c in candidates[:position] if c.action == "add"]
            if earlier:
                scrubbed |= _values_in(earlier[-1].content)
                scrubbed.add(earlier[-1].content.casefold())
            continue
        if value := forget.metadata.get("value"):
            scrubbed.add(str(value).casefold())
        if forget.subject:
            # "my new number is X, please delete my old number": the old one is what was on file, not X
            held = [] if forget.metadata.get("old") else [
                c.content for c in candidates[:position] if c.action == "add" and covers(forget.subject, c.subject)]
            held += [memory.content for memory in existing if covers(forget.subject, memory.subject)]
            scrubbed |= {value for content in held for value in _values_in(content)}
    kept = []
    for index, candidate in enumerate(candidates):
        if candidate.action == "add" and any(value in candidate.content.casefold() for value in scrubbed):
            continue
        if candidate.action == "add" and any(forget.subject and covers(forget.subject, candidate.subject)
                                             and index < position and not forget.metadata.get("old")
                                             for position, forget in forgets):
            continue  # stated, then asked to be forgotten in the same batch
        kept.append(candidate)
    return _old_forgotten_first(kept)


def _old_forgotten_first(candidates: list[Candidate]) -> list[Candidate]:
    """A forget of the old value ("delete my old number") goes before the batch's new value of that subject, so that
    it takes what was on file and not the value just given."""
    result: list[Candidate] = []
    for candidate in candidates:
        position = len(result)
        if candidate.action == "delete" and candidate.metadata.get("old") and candidate.subject:
            position = next((index for index, earlier in enumerate(result)
                             if earlier.action == "add" and covers(candidate.subject, earlier.subject)), position)
        result.insert(position, candidate)
    return result


_HOME_ADDRESS = subjects.address_subject("home")


def _another_number_is_not_a_change(candidates: list[Candidate], existing: list[ExistingMemory]) -> list[Candidate]:
    """"My mobile is 07700 900 318" and later "call me on 0113 496 0721 today": a number given without saying what
    kind it is, or that it changed, is another number of the user's, not a new mobile that retires the one on file;
    an address given on its own while another is on file is not kept at all (a delivery and a move read the same)."""
    held = {subject: [memory.content for memory in existing if memory.subject == subject]
            for subject in (subjects.PHONE, subjects.EMAIL, _HOME_ADDRESS)}
    dropped: set[int] = set()
    for candidate in candidates:
        value = str(candidate.metadata.get("value") or "")
        if candidate.subject not in held or candidate.action != "add":
            continue
        on_file = [_comparable(said) for said in held[candidate.subject]]
        if candidate.metadata.pop("unqualified", False) and on_file and not any(
                _comparable(value) in said for said in on_file):
            if candidate.subject == subjects.PHONE:
                candidate.subject = subjects.phone_subject("other")
                candidate.content = candidate.content.replace(" phone number is ", " other phone number is ")
                candidate.metadata["kind"] = "other"
            elif candidate.subject == _HOME_ADDRESS:
                dropped.add(id(candidate))  # an address given on its own: a delivery, a correction, a move? Not known
                continue
            else:  # "it's jo@x.com for the invoices": an address they gave, kept beside the one on file
                owner = re.sub(r"(?:'s|\u2019s)$", "", candidate.content.split(" email address is ")[0])
                candidate.subject, candidate.content = None, f"{owner} also uses the email address {value}"
        if candidate.subject in held:
            held[candidate.subject].append(candidate.content)
    return [candidate for candidate in candidates if id(candidate) not in dropped]


def _comparable(text: str) -> str:
    """Text as a number or address is compared in: case and the spacing of digit groups do not count
    ("07700900318" is "07700 900318", "ANN@x.com" is "ann@x.com")."""
    return re.sub(r"(?<=\d)[\s().-]+(?=\d)", "", text.casefold())


def _replaced_not_retracted(candidates: list[Candidate]) -> list[Candidate]:
    """"I've closed my PayPal account, use my Amex from now on": the new value supersedes the old one, so the
    implicit retraction is dropped. An explicit forget request stays a delete: the user asked for it to go. A
    retracted organisation or product still reaches the free-form memories that name it ("I've left Halden & Moss,
    I'm at Yorkshire Water now" retires "The user is at Halden & Moss during the day")."""
    kept = []
    for candidate in candidates:
        # the value said after the retraction replaces it ("I've closed my PayPal account, use my Amex from now on");
        # one said before it is what it takes back ("I'm allergic to sesame ... I'm not allergic to sesame after all")
        # (within one message the rules' order is not the sentence's, so only an earlier message counts as before)
        added = {other.subject: other for other in candidates if other.action == "add" and other.subject
                 and min(other.source_seqs, default=0) >= min(candidate.source_seqs, default=0)}
        if not (candidate.action == "delete" and candidate.subject and candidate.metadata.get("rule") != "retract.forget"
                and not candidate.target_memory_id and candidate.subject in added):
            kept.append(candidate)
        elif candidate.subject in NAMED_VALUE_SUBJECTS and (value := candidate.metadata.get("value")):
            new = added[candidate.subject].metadata
            new["replaces_mentions"] = [*new.get("replaces_mentions", []), value]
    return kept


def pin_replacements(candidates: list[Candidate], existing: list[ExistingMemory]) -> list[Candidate]:
    """"We switched from Slack to Teams": the new value takes the subject of the memory holding the old one
    (an earlier candidate of the batch, else an existing memory), so consolidation supersedes exactly that one."""
    for index, candidate in enumerate(candidates):
        old = str(candidate.metadata.get("replaces") or "").casefold()
        family = candidate.metadata.get("family")
        if not old or not family:
            continue
        earlier = [(c.subject, c.content) for c in candidates[:index] if c.action == "add" and covers(family, c.subject)]
        known = earlier[::-1] + [(memory.subject, memory.content) for memory in existing if covers(family, memory.subject)]
        subject = next((subject for subject, content in known if old in content.casefold()), None)
        if subject:
            candidate.subject = subject
    return candidates


_ON_NAMED = re.compile(r"^The user is (?:now )?on (?:the )?(?P<plan>[A-Z][\w+&.'-]*(?: [A-Z0-9][\w+&.'-]*){0,2})(?: now)?$")


def _plan_named_alone(candidates: list[Candidate], existing: list[ExistingMemory]) -> None:
    """"We're on Growth now" names no plan, but with a plan on file (or said before in the batch) it is the plan:
    it takes the plan's subject, so it replaces the old one."""
    plans = {memory.subject for memory in existing if memory.subject == "plan"}
    for candidate in candidates:
        if candidate.action == "add" and candidate.subject == "plan":
            plans.add("plan")
        elif plans and candidate.action == "add" and candidate.metadata.get("rule") == "statement" and (
                match := _ON_NAMED.match(candidate.content)):
            candidate.subject = "plan"
            candidate.metadata |= {"rule": "business.plan", "value": match.group("plan")}


def _shortened_names(candidates: list[Candidate], existing: list[ExistingMemory]) -> list[Candidate]:
    """"Hi, Gustavo Lima" after "Gustavo Brandão Lima": part of the name already known is the same name, not a new
    one to replace it with."""
    known = [_name_parts(memory.content.split(" is ", 1)[-1]) for memory in existing if memory.subject == "name"]
    kept = []
    for candidate in candidates:
        value = str(candidate.metadata.get("value") or "")
        if candidate.action == "add" and candidate.subject == "name" and value:
            words = _name_parts(value)
            if any(words < name for name in known):
                continue
            known.append(words)
        kept.append(candidate)
    return kept


def _pin_role_changes(candidates: list[Candidate], existing: list[ExistingMemory]) -> None:
    """"Your coordinator is now Sam Ito": Sam takes the subject of the one contact in that role before (an earlier
    candidate of the batch, else an existing memory), so consolidation supersedes exactly that one; with none, or
    more than one, nothing is replaced."""
    for index, candidate in enumerate(candidates):
        role = candidate.metadata.get("replaces_role")
        if not role or candidate.action != "add":
            continue
        earlier = [c.subject for c in candidates[:index] if c.action == "add" and c.subject]
        holders = {subject for subject in [*earlier, *(memory.subject for memory in existing if memory.subject)]
                   if subject != candidate.subject and _contact_role(subject) == role}
        if len(holders) == 1:
            candidate.subject = holders.pop()


def _contact_role(subject: str) -> str | None:
    """The head word of a contact subject's relation: "coordinator" in "contact:wedding coordinator:sunita rao"."""
    parts = subject.split(":")
    return parts[1].split()[-1] if parts[0] == "contact" and len(parts) > 1 and parts[1] else None


def _name_parts(name: str) -> set[str]:
    return set(re.split(r"[\s-]+", name.casefold().strip()))


def _pin_retractions(candidates: list[Candidate], existing: list[ExistingMemory]) -> list[Candidate]:
    """Point value-specific retractions ("I no longer live in Paris") at the memory they retract.

    A matching existing memory becomes the target. When the user's existing memories on that subject hold a
    different value, there is nothing to retract and the delete is dropped. Without any such memory the delete
    stays subject-wide, and moves ahead of a new value given earlier in the batch ("I moved to Berlin, I no
    longer live in Paris") so that consolidation does not invalidate the new value.
    """
    result: list[Candidate] = []
    for candidate in candidates:
        value = candidate.metadata.get("value")
        if candidate.action != "delete" or not value or candidate.target_memory_id or not candidate.subject:
            result.append(candidate)
            continue
        same_subject = [memory for memory in existing if covers(candidate.subject, memory.subject)]
        matching = [memory for memory in same_subject if value.casefold() in memory.content.casefold()]
        if matching:
            result += [dataclasses.replace(candidate, target_memory_id=memory.id, tags=list(candidate.tags),
                                           metadata=dict(candidate.metadata), source_seqs=list(candidate.source_seqs))
                       for memory in matching]
            continue
        if same_subject:
            continue
        position = next((index for index, earlier in enumerate(result)
                         if earlier.action == "add" and earlier.subject == candidate.subject
                         and str(earlier.metadata.get("value", "")).casefold() != value.casefold()), len(result))
        result.insert(position, candidate)
    return result


# "Booked for the user: gas safety check for Wednesday 22 April" / later "The assistant moved the gas safety check to
# Friday 24 April": a booking is keyed by what is booked and its date, so a second booking of the same kind on another
# day stands beside the first, and a move takes the subject of the booking it moves, which it then supersedes.
_BOOKED_THING = re.compile(r"^Booked for [^:]+:\s+(?:(?:the|a|an|your|their)\s+)?(?P<thing>[^,;]+?)\s+(?:for|on|with"
                           r"|from|every|starting)\b", re.I)
_AGENT_BOOKED = re.compile(r"^(?:The assistant|Support)(?:\s+\w+)?\s+(?:booked|scheduled|arranged|reserved)\s+"
                           r"(?:the user's\s+|their\s+|the\s+|an?\s+)?(?P<thing>[^,;]+?)\s+(?:for|on|with|from|every"
                           r"|starting)\b", re.I)
_MOVED_THING = re.compile(r"^(?:The assistant|Support)(?:\s+\w+)?\s+(?:moved|rescheduled|pushed\s+back|brought\s+forward)"
                          r"\s+(?:the user's\s+|their\s+|the\s+|[\w' -]+?'s\s+)?(?P<thing>[^,;]+?)\s+(?:to|there|until|from"
                          r"|for|on)\b", re.I)
_BOOKING_KEY_STOPS = frozenset("with for on from by to every starting".split())


def _booking_key(thing: str) -> str | None:
    words = []
    for word in re.findall(r"[\w'-]+", thing.casefold()):
        if word in _BOOKING_KEY_STOPS or len(words) == 5:
            break
        words.append(word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "'s")) else word)
    return " ".join(words) if words and words[0] not in ("it", "that", "this", "them", "one") else None


_PRONOUN_THING = re.compile(r"(?:it|that|this|them|that\s+one|this\s+one)\b", re.I)


def _key_bookings(candidates: list[Candidate], existing: list[ExistingMemory]) -> None:
    known = [memory.subject for memory in existing if (memory.subject or "").startswith("booking:")]
    for candidate in candidates:
        if candidate.action != "add" or candidate.subject:
            continue
        moved = _MOVED_THING.match(candidate.content)
        booked = None if moved else _BOOKED_THING.match(candidate.content) or _AGENT_BOOKED.match(candidate.content)
        key = _booking_key((moved or booked).group("thing")) if moved or booked else None
        if key is None and moved and _PRONOUN_THING.match(moved.group("thing")):
            # "I've moved it to Thursday 14 May" right after a booking: the booking the batch or the file knows last
            key = next((subject.split(":")[1] for subject in reversed(known)), None)
        if key is None:
            continue
        prefix = f"booking:{key}:"
        matching = {subject for subject in known if subject.startswith(prefix)}
        # two bookings it could be ("the table" at two restaurants): move none rather than the wrong one
        before = matching.pop() if len(matching) == 1 else None
        candidate.subject = before if moved and before else f"{prefix}{candidate.metadata.get('date', 'undated')}"
        known.append(candidate.subject)

