"""Customer-support facts: identifiers, the user's contact details, addresses and contacts, how to reach them, and
outcomes such as refunds, replacements, bookings and opened tickets.

The readers live in their own modules (identifiers, contacts, addresses, people); this one holds what support did
(outcomes and "Issue: / Resolution:" lines) and `support_clause`, the user-clause hook the extractor runs before
the general fact rules.
"""

import dataclasses
import re
from datetime import date

from apps.extraction.extractors.base import Candidate
from apps.extraction.extractors.rules import lexicon
from apps.extraction.extractors.rules.addresses import address_value, addresses
from apps.extraction.extractors.rules.commands import (
    NAMED_THING,
    RECORDS_AFTER,
    forgotten_things,
    is_thing_name,
    qualified_detail_subject,
)
from apps.extraction.extractors.rules.contacts import EMAIL, PHONE, contact_preferences, without_condition
from apps.extraction.extractors.rules.context import RuleContext
from apps.extraction.extractors.rules.dates import find_dates
from apps.extraction.extractors.rules.dialogue import agrees
from apps.extraction.extractors.rules.identifiers import identifiers
from apps.extraction.extractors.rules.people import people
from apps.extraction.extractors.rules.person import rewrite_first_person, rewrite_second_person
from apps.extraction.extractors.rules.subjects import address_subject, email_subject, phone_subject, setting_subject
from apps.extraction.extractors.rules.text import Clause, normalise_key

_POLITE_WISH = re.compile(r"^I(?:'d|\s+would)\s+(?:much\s+|really\s+)?(?:like|prefer|rather|love)\b", re.I)
# A condition on how a standing fact is used ("... on 087 555 1212 if I'm not available") leaves the fact standing;
# a hypothetical ("if I moved ...", "maybe my wife ...") does not.
_TRAILING_CONDITION = re.compile(r",?\s+(?:if|unless|in\s+case|whenever|when)\b.*$", re.I)
_HYPOTHETICAL = re.compile(r"^(?:if|unless|suppose|supposing|imagine|assuming|what\s+if|in\s+case|let's\s+say|even\s+if"
                           r"|when|whenever|once|as\s+soon\s+as)\b|\b(?:maybe|perhaps|might|may|wish|wonder|wondering"
                           r"|thinking\s+(?:about|of)|considering|not\s+sure|hypothetical(?:ly)?|in\s+theory|would"
                           r"|could|I'd)\b", re.I)


def support_clause(clause: Clause, ctx: RuleContext) -> list[Candidate]:
    """What a user clause says about reaching the user: one of their contacts, an address, or how and when to
    contact them. Read before the general fact rules, which would take "my wife Sara is the account holder" or
    "please don't call me" for something else; [] leaves the clause to them."""
    text = clause.text
    if clause.uncertain and (rest := without_condition(text)):  # "in future if you need me, please send a text"
        clause = Clause(text=rest, question=clause.question, uncertain=False, hedged=clause.hedged)
        text = rest
    if clause.uncertain and not _POLITE_WISH.match(text) and _HYPOTHETICAL.search(_TRAILING_CONDITION.sub("", text)):
        return []
    return (people(text, ctx, question=clause.question) or addresses(text, ctx, question=clause.question)
            or contact_preferences(clause, ctx) or ([] if clause.question else delivery_time(text, ctx)))


# "Deliveries must arrive before 7am", "please only deliver on weekdays": when the customer can take deliveries.
_DELIVERY_TIME = re.compile(
    r"^(?:(?:all|our|my|the|any)\s+)?(?:deliveries|delivery|parcels?|orders?|drops?|drop-offs?|collections?)\s+"
    r"(?:must|should|need\s+to|needs\s+to|have\s+to|has\s+to|can\s+only|can't|cannot|can\s+not)\s+"
    r"(?:(?:arrive|come|be\s+(?:made|delivered|dropped\s+off|collected))\s+)?(?P<when>(?:before|after|between|by|on|from"
    r"|in\s+the|outside)\b[^,;]+)"
    r"|^(?:please\s+)?(?:only\s+)?deliver\s+(?:only\s+)?(?P<when2>(?:before|after|between|on|from|in\s+the)\b[^,;]+)",
    re.I,
)


def delivery_time(text: str, ctx: RuleContext) -> list[Candidate]:
    match = _DELIVERY_TIME.match(text)
    if not match:
        return []
    when = (match.group("when") or match.group("when2")).strip(" .")
    negative = bool(re.search(r"\b(?:can't|cannot|can\s+not)\b", text[:match.start("when") if match.group("when")
                                                                        else 0], re.I))
    content = ctx.person.sentence(f"{'cannot take' if negative else 'takes'} deliveries {when}")
    return [ctx.candidate(content, memory_type="preference", confidence=0.8, rule="preference.delivery_time",
                          subject="preference:delivery_time", tags=("preference", "delivery"),
                          metadata={"value": when, "sentiment": "negative" if negative else "positive"})]


# --- Outcomes: what support did ------------------------------------------------------------------------
_AMOUNT = re.compile(r"[$€£¥₹]\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s?(?:USD|EUR|GBP|CAD|AUD|dollars?|euros?"
                     r"|pounds?|bucks)\b|\b(?:USD|EUR|GBP|CAD|AUD)\s?\d[\d,]*(?:\.\d+)?")
_DONE = ("opened|created|filed|raised|logged|submitted|escalated|issued|processed|initiated|refunded|credited|given|granted"
         "|applied|sent|shipped|dispatched|arranged|ordered|scheduled|rescheduled|booked|cancell?ed|canceled|reset"
         "|updated|changed|reactivated|unlocked|upgraded|downgraded|waived|reversed|removed|added|approved|replaced"
         "|resolved|closed|confirmed|requested|generated|emailed|mailed|posted|reissued|restored|extended"
         "|authori[sz]ed|activated|deactivated|paid|completed|set\\s+up|sent\\s+out|moved|transferred|renewed"
         "|started|placed|blocked|prepared|enrolled|registered|assigned|turned\\s+(?:off|on)|switched\\s+(?:off|on)"
         "|reserved|allocated|put(?=\\s+(?:you|him|her|them|(?-i:[A-Z])\\w+)\\s+(?:in|on|down)\\b)"
         "|set(?=\\s+(?:you|him|her|them)\\s+up\\b)|signed(?=\\s+(?:you|him|her|them)\\s+up\\b)"
         "|set(?=\\s+(?:a|an|up\\s+a|your)\\s+(?:[\\w-]+\\s+)?(?:reminder|alert|follow-?up|callback|call-?back)\\b)")
# Sending the customer something to act on now (a label, a link, a code) is part of this conversation, not a fact
# for later; a replacement, a refund or a new card sent is (it has an amount or is not paperwork).
_PASSING_PAPERWORK = re.compile(
    r"^(?:sent|emailed|mailed|texted|resent|re-sent|forwarded|generated|posted|sent\s+out)\s+(?:you\s+|it\s+to\s+you\s+)?"
    r"(?:(?:a|an|the|your|another|new|fresh|prepaid|free|printable|one-time|secure|confirmation)\s+){0,3}"
    r"(?:return(?:s)?\s+label|label|(?:reset\s+|password\s+reset\s+|payment\s+|verification\s+|download\s+)?links?"
    r"|(?:one-time\s+|verification\s+|security\s+|qr\s+)?codes?|confirmation(?:\s+email)?|copy|form|instructions"
    r"|details|email|message|summary|reminder)\b(?!.*\d{3})",
    re.I,
)
# Opening a ticket or an RMA says no more than the identifier memory does; escalating or logging a complaint does.
_FILING = frozenset("opened created generated".split())
# Verbs that put the customer in a calendar: with a date they matter on their own ("I've booked you in for Tuesday").
_SCHEDULING = frozenset("arranged scheduled rescheduled booked moved confirmed set put reserved signed".split())
# "As a goodwill gesture I've refunded €23.40", "To make up for it, we've credited ...": why, before who did it.
_WHY_FIRST = (r"(?:(?:as\s+an?\s+(?:goodwill\s+gesture|gesture\s+of\s+goodwill|apology|one-off|courtesy)"
              r"|to\s+(?:apologi[sz]e|make\s+up\s+for\s+(?:it|that|this|the\s+\w+))|for\s+the\s+(?:trouble|inconvenience)"
              r"|in\s+the\s+meantime|meanwhile)\s*,?\s*)?")
_ACTOR_DID = re.compile(
    rf"^{_WHY_FIRST}(?P<actor>I|we)(?:'ve|\s+have|'d|\s+had)?(?P<adv>(?:\s+(?:just|already|now|also|successfully|gone\s+ahead\s+and"
    rf"|went\s+ahead\s+and))*)\s+(?P<verb>{_DONE})\b(?P<rest>.*)$",
    re.I,
)
_PASSIVE = re.compile(
    rf"^.{{0,80}}?\b(?:has|have|had|was|were|is|are)\s+(?:been\s+)?(?:(?:successfully|now|already|just|being"
    rf"|fully)\s+)*(?P<verb>{_DONE})\b(?P<rest>.*)$",
    re.I,
)
_OUTCOME_NOUNS = (r"refund|replacement|credit|ticket|case|voucher|return\s+label|exchange|visit|appointment|callback"
                  r"|call[\s-]?back|collection|pick-?up|delivery|repair|installation|cancellation|booking|escalation"
                  r"|compensation|reimbursement|payment|order|claim|engineer|technician")
# "Refund of €40 issued", "Engineer visit scheduled for next Monday": a result written as a headline.
_HEADLINE = re.compile(rf"^(?:(?:a|an|the|your)\s+)?(?:(?:full|partial|new|free|courtesy|goodwill|one-off|home|site"
                       rf"|follow-up|engineer|technician|return|replacement)\s+){{0,2}}(?P<noun>{_OUTCOME_NOUNS})s?\b"
                       rf".{{0,60}}?\s(?P<verb>{_DONE})\b(?P<rest>.*)$", re.I)
# "An engineer will visit next Monday", "Your refund will be processed by Friday": arranged, with a date.
_ARRANGED = re.compile(
    rf"^(?:(?:a|an|the|your)\s+)?(?:[\w-]+\s+){{0,2}}?(?P<noun>{_OUTCOME_NOUNS}|courier|driver|parcel|package)s?"
    r"\s+(?:will|is\s+(?:due|scheduled|booked|set)\s+to|are\s+(?:due|scheduled)\s+to)\s+(?:be\s+)?"
    r"(?P<verb>arrive|visit|call|come|delivered|processed|credited|refunded|dispatched|shipped|collected|reach|back"
    r"|with\s+you|in\s+touch|returned|issued|applied|completed|sent)\b(?P<rest>.*)$",
    re.I,
)
# "I'll call you back tomorrow at 3pm": a dated promise to the customer.
_PROMISE = re.compile(r"^(?:I|we)(?:'ll|\s+will)\s+(?:(?:personally|also)\s+)?(?P<verb>call|ring|phone|email|e-mail"
                      r"|contact|text|follow\s+up\s+with|get\s+back\s+to|update)\s+you\b(?P<rest>.*)$", re.I)
_PAST = {"given": "gave"}
# "we'll refund £349 to your original payment method", "I'll apply a credit of €80 to your next invoice": money promised.
_MONEY_PROMISE = re.compile(r"^(?:(?:once|when|as\s+soon\s+as)\s+[^,]{3,80},\s*)?(?P<actor>I|we)(?:'ll|\s+will)\s+(?:(?:also|then|now)\s+)?(?P<verb>refund|credit|apply|issue|waive"
                            r"|reimburse|add|pay)\b(?P<rest>.*)$", re.I)
_SUPPORT_NOUNS = re.compile(
    r"\b(?:ticket|case|refund|replacement|order|subscription|account|credit|voucher|coupon|discount|password|charge"
    r"|payment|invoice|shipment|package|parcel|exchange|return|label|technician|engineer|appointment|visit|callback"
    r"|fee|booking|reservation|claim|request|plan|device|item|card|address|warranty|RMA|repair|installation"
    r"|collection|delivery|contract|policy|membership|lease|agreement|complaint|reference|report|fault|query|enquiry"
    r"|inquiry|sim|router|modem|handset|equipment|bill|statement|letter|cheque|escalat\w*|registration|application"
    r"|enrol(?:l)?ment|reminder|deposit|desk|room|table|seat|space|slot|locker|parking\s+(?:bay|space)|pitch|cabin"
    r"|suite|class|course|lessons?|sessions?|group)\b",
    re.I,
)
_NOT_DONE = re.compile(r"n't\b|\b(?:not|never|no\s+longer|unable|cannot|yet\s+to|will|would|should|may|might"
                       r"|going\s+to|once|if|when|unless|can|could)\b", re.I)
_KIND_OF_ACTION = (
    ("refund", re.compile(r"\brefund", re.I)),
    ("replacement", re.compile(r"\breplace", re.I)),
    ("escalation", re.compile(r"\bescalat", re.I)),
    ("cancellation", re.compile(r"\bcancel", re.I)),
    ("ticket", re.compile(r"\b(?:ticket|case)\b", re.I)),
    ("credit", re.compile(r"\b(?:credit|voucher|coupon|discount|waived|compensation)", re.I)),
    ("account", re.compile(r"\b(?:reset|unlocked|reactivated|password)", re.I)),
    ("appointment", re.compile(r"\b(?:visit|appointment|booked|scheduled|rescheduled|engineer|technician|callback"
                               r"|call\s+(?:you\s+)?back|installation|repair)", re.I)),
    ("shipment", re.compile(r"\b(?:shipped|dispatched|sent|shipment|tracking|delivery|courier|collection)", re.I)),
    ("resolution", re.compile(r"\b(?:resolved|closed)", re.I)),
)


def _action_kind(text: str) -> str:
    return next((kind for kind, pattern in _KIND_OF_ACTION if pattern.search(text)), "action")


def _outcome(ctx: RuleContext, content: str, text: str, rule: str, confidence: float) -> Candidate:
    metadata = {"kind": _action_kind(text)}
    amounts = [amount.rstrip(",") for amount in _AMOUNT.findall(text)]
    if amounts:
        metadata["amounts"] = amounts
    dates = find_dates(text, ctx.reference)
    if dates:
        metadata |= dates[0].metadata()
    return ctx.candidate(content, memory_type="episode", confidence=confidence, rule=rule, tags=("support",),
                         metadata=metadata)


def _dated(text: str) -> bool:
    return any(not mention.past for mention in find_dates(text, None))


_REMOVAL = re.compile(r"\b(?:removed|deleted|erased|wiped|cleared|purged|taken\s+off|took\s+off|scrubbed)\b", re.I)
_VALUE_LIKE = re.compile(r"@|\d{3}")
_REMOVED_PRONOUN = re.compile(r"\b(?:removed|deleted|erased|taken|took)\s+(?:him|her|them)\b", re.I)
_SOMEONE = re.compile(r"\b[A-Z][a-z]+\s+[A-Z][a-z]+\b")
# "I've removed Javed from your membership and from our records": one name alone is someone only where what is known
# of them goes too.
_FROM_RECORDS = re.compile(r"\b(?:from|off)\s+(?:our|your|the)\s+(?:records?|files?|system|database|details)\b", re.I)
_REMOVED_NAME = re.compile(r"\b(?:removed|deleted|erased)\s+(?P<name>(?-i:[A-Z][a-z'-]+))\s+(?:and\s+(?:his|her|their)\s+[\w ]{2,30}?\s+)?"
                           r"from\b")
# "I've removed Dean and his number from your account": what is known of them goes with them.
_AND_THEIR_DETAILS = re.compile(r"\band\s+(?:his|her|their)\s+(?:(?:phone|mobile|contact)\s+)?(?:number|details|email|phone"
                                r"|info(?:rmation)?|data|address)\b", re.I)


# A booking the agent confirms, with its date: "You're booked with Dr Lindgren on Wednesday 24 June",
# "Booked: check-up on Wednesday 25 February at 17:45", "Survey booked for Thursday 7 May", "Booked at the
# Frankfurter Hof, 21 to 24 September"; and a dated event of the customer's the agent reports ("your policy renews
# on Thursday 9 April", "the cruise departs from Amsterdam on Saturday 3 October").
_YOU_ARE_BOOKED = re.compile(r"^(?:(?:done|great|perfect|all\s+done|okay|ok)[\s,.!:-]+)?(?:you're|you\s+are)\s+(?:now\s+"
                             r"|all\s+)?(?:booked|scheduled|confirmed|(?:all\s+)?set)\s+(?:in\s+)?(?P<rest>(?:with|for|on|at|in"
                             r"|into)\b.+)$", re.I)
_BOOKED_LABEL = re.compile(r"^(?:(?:re)?booked|scheduled|rescheduled|confirmed)\s*[:,-]\s*(?P<what>\S.+)$"
                           r"|^(?:(?:re)?booked|scheduled|rescheduled)\s+(?P<where>(?:at|into|in)\b.+)$"
                           r"|^(?:(?:a|an|the|your)\s+)?(?P<thing>[\w-]+(?:\s+[\w-]+){0,2}?)\s+(?:is\s+|has\s+been\s+)?"
                           r"(?:(?:re)?booked|scheduled|rescheduled|confirmed)\s+(?P<when>(?:for|on)\b.+)$", re.I)
_EVENT_VERBS = (r"renews|expires|ends|starts|begins|departs|leaves|arrives|lands|is\s+due|falls\s+due|runs\s+out"
                r"|finishes|takes\s+off|comes\s+up\s+for\s+renewal")
_THEIR_EVENT = re.compile(rf"^(?:(?:actually|so|and|but)\s+)?(?P<owner>the|your|an?)\s+(?P<thing>[\w%-]+(?:\s+[\w-]+){{0,2}}?)\s+"
                          rf"(?:actually\s+|now\s+|only\s+)?(?P<verb>{_EVENT_VERBS})\b(?P<rest>.+)$", re.I)
_NEGATED = re.compile(r"\b(?:not|never|no\s+longer)\b|n't\b", re.I)
_BOOKABLE = (r"booking|reservation|appointment|visit|stay|slot|delivery|collection|pickup|pick-up|installation|session"
             r"|lesson|class|consultation|check-in|flight|trip|tour|table|room|service|repair|viewing|deadline|move")
_NOW_ON = re.compile(rf"^(?:(?:your|the)\s+(?P<thing>(?:[\w-]+\s+){{0,2}}?(?:{_BOOKABLE}))|(?P<ref>(?-i:[A-Z]{{1,5}})-?\d[\w-]{{2,}}))"
                     r"\s+(?:is|are|has\s+been)\s+now\s+(?:(?:moved|changed|rescheduled)\s+)?(?:to\s+|on\s+|for\s+)?(?P<when>.+)$",
                     re.I)
_DATE_BOOKED = re.compile(r"^(?P<when>.+?)\s+(?:is|has\s+been)\s+(?:now\s+)?(?:booked|reserved|confirmed)(?:\s+for\s+"
                          r"(?P<what>(?:the|your)\s+.+)|(?P<tail>\s*,\s*[^,]+)?)$", re.I)
# "your delivery slot is Saturday 7 March, 9am to 12pm": a bookable thing of theirs, said to be on a date to come
_SLOT_IS = re.compile(rf"^your\s+(?P<thing>(?:[\w-]+\s+){{0,2}}?(?:{_BOOKABLE}))\s+(?:is|will\s+be)\s+(?:on\s+|for\s+)?"
                      r"(?P<when>.+)$", re.I)
_ACCOUNT_THINGS = frozenset("policy contract subscription plan membership lease tenancy booking reservation flight "
                            "cruise trip tour cover warranty trial term loan mortgage card insurance renewal "
                            "appointment visit installation delivery deposit balance payment instalment installment "
                            "invoice bill premium".split())
_NOT_BOOKINGS = frozenset("it this that which what who there here one".split())


# A change the agent confirms: "I've upgraded you to Fibre 500", "Done: upgraded to Fibre 500 from today", "you'll
# move to Fibre 500 on Friday 3 July", "you're on Business Unlimited at £22 per line", "I've switched your receipts
# to PDF attachments". A plan the customer is put on takes the "plan" subject, so it replaces the old one; a setting
# takes its own.
_PRODUCT = r"(?-i:[A-Z][\w+&.'-]*)(?:\s+(?-i:[A-Z0-9][\w+&.'-]*)){0,3}"
_CHANGE_VERBS = r"(?:upgraded|downgraded|moved|switched|changed|set|updated)"  # not "transferred": a call is transferred too
_CONFIRMED_CHANGE = re.compile(
    rf"^(?:I(?:'ve|\s+have)\s+(?:now\s+|also\s+|just\s+)?{_CHANGE_VERBS}\s+(?:you|your\s+(?P<what>[\w-]+(?:\s+[\w-]+)?))"
    rf"|{_CHANGE_VERBS}|you(?:'ll|\s+will)\s+(?:move|switch|be\s+moved|be\s+switched|go))\s+(?:over\s+)?(?:to|onto)\s+"
    r"(?:the\s+)?(?P<value>[^,;]{1,60}?)(?P<rest>(?:\s+(?:from|on|starting|as\s+of|at|for|with)\b[^;]*)?)$",
    re.I,
)
# "Home airport set to Manchester (MAN)", "your default courier has been changed to DPD": the setting named first.
_SETTING_SET = re.compile(r"^(?:your\s+)?(?P<what>(?-i:[A-Za-z][\w-]*)(?:\s+[a-z][\w-]*)?)\s+(?:is\s+now\s+|has\s+been\s+|now\s+)?"
                          r"(?:set|changed|updated|switched)\s+to\s+(?:the\s+)?(?P<value>[^,;]{1,60}?)"
                          r"(?P<rest>(?:\s+(?:from|on|starting|as\s+of|for|with)\b[^;]*)?)$", re.I)
# "your recurring booking is now Mondays and Thursdays", "Zara's pattern is now ...": a thing of the customer's (or of
# someone they named) as it now stands; not "your refund is now processing" (a status the next line of work changes).
_NOW_IS = re.compile(
    r"^(?P<owner>your|(?-i:[A-Z][a-z]+)'s)\s+(?P<what>[\w:-]+(?:\s+[\w:-]+){0,4}?)\s+(?P<verb>is|are)\s+now\s+"
    r"(?!(?:being|processing|pending|on\s+its\s+way|in\s+progress|active|live|closed|cancell?ed|booked|ready|sorted"
    r"|done|available|due|overdue|showing|visible|complete|confirmed|with|under|open|set)\b)"
    r"(?P<value>[^;]{1,120}?)[.!]?$", re.I)
# Plans have rules of their own; the rest is the state of one piece of work, not how things stand from now on.
_NOT_STANDING = frozenset("plan tier package subscription membership balance refund order parcel delivery ticket case "
                          "complaint claim status payment bill invoice total credit quote".split())
_SURE_LEAD = re.compile(r"^(?:(?:(?:no\s+)?problem|no\s+worries|of\s+course|certainly|sure|all\s+set|right)[\s,.!:-]+)+", re.I)
_NOT_SETTINGS = frozenset("it this that everything all which what who there he she they we i you".split())
_ON_PRODUCT = re.compile(rf"^(?:you're|you\s+are)\s+(?:now\s+|currently\s+|still\s+)?on\s+(?:the\s+)?(?P<value>{_PRODUCT})"
                         r"(?P<rest>(?:\s+(?:at|for|with|from)\b[^;]*)?)$", re.I)
_PRODUCT_ACTIVE = re.compile(rf"^(?P<value>{_PRODUCT})\s+is\s+(?:now\s+)?(?:active|live|activated|enabled|set\s+up)\b"
                             r"(?P<rest>.*)$")
# A product's name has a second word, a digit or an inner capital ("World 100", "PhoneCare"); "It is now active",
# "Everything is set up" name none.
_NAMED_PRODUCT = re.compile(r"^(?:\S+\s+\S+|.*\d.*|\S+?[a-z]\S*?[A-Z]\S*)$")
# "the Priority List", "our Billing Team": a place in a queue or an organisation, not a plan.
_NOT_PLANS = frozenset("list register queue team department desk line group channel".split())
_OWNED_ELSEWHERE = frozenset("contact address email e-mail phone number mobile name details preference preferences"
                             .split())
_DONE_LEAD = re.compile(r"^(?:(?:done|great|perfect|all\s+done|okay|ok|sorted|understood|noted)[\s,.!:-]+)+", re.I)


def confirmed_change(clause: Clause, ctx: RuleContext) -> list[Candidate]:
    """The customer's plan or setting as the agent confirms it changed, or []."""
    text, person = _DONE_LEAD.sub("", clause.text), ctx.person
    if clause.question or clause.uncertain or not text:
        return []
    match = _CONFIRMED_CHANGE.match(text)
    if not match and (named := _SETTING_SET.match(text)) and named.group("what").split()[0].lower() not in _NOT_SETTINGS:
        match = named
    if match:
        # "... to Bristol (BRS) and your email to ...": the value ends where the next change begins
        value = re.split(r"\s+and\s+(?:your|you|the)\b|\s+as\s+(?:you|requested|asked|discussed|agreed)\b",
                         match.group("value").strip(), maxsplit=1, flags=re.I)[0]
        value = re.sub(r"\s*\([^)]*\)$", "", value) or value
        rest = rewrite_second_person(match.group("rest") or "", person)
        what = match.group("what")
        if what and match.re is _SETTING_SET:
            what = what[0].lower() + what[1:]  # it began the sentence
        if what and "language" in what.lower() and value.lower() in lexicon.LANGUAGES:
            # "I've set your language preference to Welsh": the language they asked for, however they put it
            return [ctx.candidate(person.sentence(f"prefers to communicate in {value.capitalize()}"),
                                  memory_type="preference", confidence=0.8, rule="support.change.language",
                                  subject="preference:language", tags=("preference", "language"),
                                  metadata={"value": value.capitalize(), "restated_by_agent": True})]
        if what and _OWNED_ELSEWHERE.intersection(what.lower().split()):
            return []  # contact details and preferences: the customer's own words, read by their rules
        if what:
            content = person.starting(f"{person.possessive} {what} {'are' if what.endswith('s') else 'is'} now "
                                      f"{value}{rest}")
            return [ctx.candidate(rewrite_second_person(content, person), memory_type="preference",
                                  confidence=0.8, rule="support.change.setting",
                                  subject=setting_subject(what), tags=("support", "setting"),
                                  metadata={"value": value})]
        if not _is_plan_name(value):
            return []  # "moved to the next step", "switched you to Sarah in our Billing team": not a plan
        moving = re.match(r"you(?:'ll|\s+will)\b", text, re.I)
        return [_plan_candidate(ctx, person.sentence(f"{'moves to' if moving else 'is on'} {value}{rest}"), value)]
    if (match := _NOW_IS.match(_SURE_LEAD.sub("", text))) and not (_OWNED_ELSEWHERE | _NOT_STANDING).intersection(
            match.group("what").lower().split()) and not (EMAIL.search(text) or PHONE.search(text)):
        # "your recurring Spin booking is now Mondays and Thursdays", "Zara's pattern is now Monday, Tuesday and
        # Thursday": what the agent confirms a thing of theirs has become (an address or number has rules of its own)
        owner, what, value = match.group("owner"), match.group("what"), match.group("value").strip()
        verb = match.group("verb").lower()
        if owner.lower() == "your":
            return [ctx.candidate(person.starting(f"{person.possessive} {what} {verb} now {value}"),
                                  memory_type="fact", confidence=0.75, rule="support.change.now",
                                  subject=setting_subject(what), tags=("support", "setting"), metadata={"value": value})]
        return [ctx.candidate(f"{owner} {what} {verb} now {rewrite_second_person(value, person)}", memory_type="fact",
                              confidence=0.7, rule="support.change.now", tags=("support",), metadata={"value": value})]
    if (match := _ON_PRODUCT.match(text)) and _is_plan_name(match.group("value")):
        rest = rewrite_second_person(match.group("rest") or "", person)
        return [_plan_candidate(ctx, person.sentence(f"is on {match.group('value')}{rest}"), match.group("value"))]
    if (match := _PRODUCT_ACTIVE.match(text)) and _NAMED_PRODUCT.match(match.group("value")):
        value = match.group("value")
        rest = rewrite_second_person(match.group("rest"), person)
        return [ctx.candidate(person.sentence(f"has {value} active{rest}"), confidence=0.75,
                              rule="support.change.product", subject=f"product:{normalise_key(value)}",
                              tags=("support", "product"), metadata={"value": value})]
    return []


def _is_plan_name(value: str) -> bool:
    return bool(re.fullmatch(_PRODUCT, value)) and value.split()[-1].lower() not in _NOT_PLANS


def _plan_candidate(ctx: RuleContext, content: str, value: str) -> Candidate:
    metadata = {"value": value, "restated_by_agent": True}
    if dates := find_dates(content, ctx.reference):  # "from today", "on Friday 3 July": resolved in the content
        metadata |= dates[0].metadata()
    return ctx.candidate(content, confidence=0.8, rule="support.change.plan", subject="plan",
                         tags=("account", "plan"), metadata=metadata)


def _to_come(text: str, reference: date | None) -> bool:
    """A date in `text` after the message's day (today's visit will not matter later), or any date not in the past
    when the message has no time."""
    mentions = find_dates(text, reference)
    if reference is None:
        return any(not mention.past for mention in mentions)
    return any((mention.end_day or mention.day or reference) > reference for mention in mentions)


# "The frame arrived yesterday and the build is scheduled for Thursday 14 May": each part of a clause on its own.
_AND_THEN = re.compile(r"(?:,\s*|\s+)and\s+(?=(?:the|your|an?)\s)|;\s*", re.I)


def booking(clause: Clause, ctx: RuleContext) -> list[Candidate]:
    """A booking the agent confirms, or an event of the customer's it reports, when it has a date to come."""
    if clause.question or clause.uncertain or not _to_come(clause.text, ctx.reference):
        return []
    if found := _booking(clause.text, ctx):
        return found
    parts = _AND_THEN.split(clause.text)
    return next((found for part in parts[1:] if _to_come(part, ctx.reference) and (found := _booking(part, ctx))), [])


def _booking(text: str, ctx: RuleContext) -> list[Candidate]:
    person = ctx.person
    if match := _YOU_ARE_BOOKED.match(text):
        rest = rewrite_second_person(match.group("rest"), person)
        # Booked with someone is an appointment ("with Dr Hughes"); booked on or into something, a booking.
        lead = "has an appointment booked" if rest.lower().startswith("with") else "is booked"
        return [_outcome(ctx, person.sentence(f"{lead} {rest}"), text, "support.outcome.booked", 0.8)]
    if _NEGATED.search(text):
        return []  # "Your room is not booked for Friday"
    if (match := _BOOKED_LABEL.match(text)) and (match.group("thing") or "").lower() not in _NOT_BOOKINGS:
        if match.group("thing"):
            what = f"{match.group('thing')} {match.group('when')}"
        else:
            what = match.group("what") or match.group("where")
        what = rewrite_second_person(what, person)
        return [_outcome(ctx, f"Booked for {person.label}: {what}", text, "support.outcome.booked", 0.8)]
    if (match := _NOW_ON.match(text)) and _to_come(match.group("when"), ctx.reference) and not re.match(
            r"(?:on|off|active|live|open|closed|ready|available|free|due|overdue|paid|late)\b", match.group("when"), re.I):
        # "Your booking is now Sunday 20 September at 7pm", "HK-40917 is now 21 to 24 November": moved to that date
        thing = match.group("thing") or f"booking {match.group('ref')}"
        when = re.sub(r"^(?=\d|(?:mon|tues|wednes|thurs|fri|satur|sun)day\b)", "to ", match.group("when"), flags=re.I)
        content = f"Support moved {person.possessive} {thing} {when if when.startswith('to ') else 'to ' + when}"
        return [_outcome(ctx, rewrite_second_person(content, person), text, "support.outcome.moved", 0.8)]
    if (match := _DATE_BOOKED.match(text)) and (found := find_dates(match.group("when"), ctx.reference)) and (
            found[0].start == 0):
        # "Saturday 30 May at 9am at Kingsway is booked for the alignment", "Thursday 24 September is booked, 8am to
        # 12pm"
        if match.group("what"):
            what = f"{rewrite_second_person(match.group('what'), person)} on {match.group('when')}"
        else:
            what = f"{match.group('when')}{(match.group('tail') or '').rstrip(' .')}"
        return [_outcome(ctx, f"Booked for {person.label}: {what}", text, "support.outcome.booked", 0.8)]
    if (match := _SLOT_IS.match(text)) and (found := find_dates(match.group("when"), ctx.reference)) and (
            found[0].start == 0):
        return [_outcome(ctx, f"Booked for {person.label}: {match.group('thing')} on {match.group('when')}", text,
                         "support.outcome.booked", 0.8)]
    thing = (match := _THEIR_EVENT.match(text)) and match.group("thing")
    if thing and match.group("owner").lower() != "your" and thing.split()[-1].lower() not in _ACCOUNT_THINGS:
        thing = None  # "the summer sale ends on ...": only "your" thing, or the account's ("the policy renews")
    # A product's own name ("your Fixed Saver ends ...") is the plan rules' to keep current; a common noun is not.
    if thing and thing.lower() not in _NOT_BOOKINGS and thing.islower():
        content = person.starting(f"{person.possessive} {match.group('thing')} {match.group('verb')}{match.group('rest')}")
        return [_outcome(ctx, rewrite_second_person(content, person), text, "support.outcome.event", 0.75)]
    return []


# "Done: a standing order of £985 to ... starting 1 September", "Done: push notifications are off", "All set: you have a
# recurring booking for ...": what the agent reports done, after a word that says so.
# "Updated: Mr Szabó at 2215 is your signature neighbour now", "Switched to whole bean from your next bag" too.
_DONE_REPORT = re.compile(r"^(?:(?:done|all\s+done|all\s+set|sorted|booked|confirmed|that's\s+done|updated|changed)"
                          r"\s*[:,.!-]\s*(?P<rest>\S.+)"
                          r"|(?P<change>(?:switched|changed|moved|updated|upgraded|downgraded)\s+(?:you\s+)?(?:over\s+)?to\s+\S.+))$",
                          re.I)
_NOW_STATE = re.compile(r"\b(?:is|are)\s+(?:now\s+)?(?:off|on|enabled|disabled|switched\s+(?:off|on)|turned\s+(?:off|on)|active"
                        r"|cancell?ed|paused|stopped|set\s+up|on\s+by\s+default|off\s+by\s+default)\b|\byou\s+have\b"
                        r"|\b(?:is|are)\s+(?:now\s+)?your\s+\w+|\bfrom\s+(?:now\s+on|your\s+next|the\s+next|next)\b", re.I)
# "Done: undeliverable parcels will go to the locker": what will happen from now on, not a promise still to keep.
_STANDING = re.compile(r"\b(?:will|'ll)\s+(?:now\s+|always\s+)?(?:go|come|arrive|be\s+(?:sent|delivered|addressed|posted"
                       r"|emailed|charged|billed|shown|used|taken))\b", re.I)


def done_report(text: str, ctx: RuleContext) -> list[Candidate]:
    """What the agent reports done after a word that says so ("Done: a standing order of £985 ..."), or []."""
    match = _DONE_REPORT.match(text)
    if not match:
        return []
    rest = (match.group("rest") or match.group("change")).rstrip(" .!")
    if _NOT_DONE.search(_STANDING.sub("", rest.split(",")[0])):
        return []
    words = [word for word in re.findall(r"[^\W\d_][\w'-]*", rest)
             if not re.search(r"\d", word) and word.lower() not in ("reference", "ref", "number", "booking", "your")]
    if len(words) < 3 or re.match(r"(?:that's|that\s+is|this\s+is|it's|it\s+is|here's)\b", rest, re.I):
        return []  # "Booked, reference CW-88142" (the identifier is kept on its own), "Done, that's the address on file"
    if "?" in rest or not (_SUPPORT_NOUNS.search(rest) or _AMOUNT.search(rest) or _dated(rest) or _NOW_STATE.search(rest)
                           or _STANDING.search(rest)):
        return []
    return [_outcome(ctx, _support_update(rest, ctx.person), rest, "support.outcome.done", 0.75)]


def outcomes(clause: Clause, ctx: RuleContext) -> list[Candidate]:
    """A completed or firmly arranged support action in an assistant, system or tool message ("I've opened ticket
    #4521 for you", "I've booked you in for Tuesday 14 May", "an engineer will visit next Monday"). Procedure talk
    ("let me check"), offers ("I can issue a refund if ...") and questions give nothing."""
    text = clause.text
    if clause.question or clause.uncertain:
        return []
    if _REMOVED_PRONOUN.search(text):
        return []  # "I've removed him from your account": who, only the conversation says
    if _REMOVAL.search(text) and (_VALUE_LIKE.search(text) or _SOMEONE.search(text) or _REMOVED_DETAIL.search(text)
                                  or _REMOVED_NAME.search(text) and (_FROM_RECORDS.search(text)
                                                                     or _AND_THEIR_DETAILS.search(text))
                                  or _REMOVED_THING.match(text)):
        # "I've removed 07700 900 123 from your file": a removal must not store again what it removed, and takes
        # the removed person or detail out of what is known ("Priyanka Shah has been removed").
        return removed_by_agent(text, ctx)
    if (removal := _REMOVED.match(text)) and not _removed_elsewhere(removal) and (removed := removed_by_agent(text, ctx)):
        # "Your landline has been taken off your account": the customer's detail, as they would name it, goes; what
        # support did stays on record after it ("Timur has been removed from your Family plan")
        return removed + _done(clause, ctx)
    return _done(clause, ctx)


def _done(clause: Clause, ctx: RuleContext) -> list[Candidate]:
    """What support did, as an episode (outcomes() without removals)."""
    text, person = clause.text, ctx.person
    if match := _ACTOR_DID.match(text):
        verb = " ".join(match.group("verb").lower().split())
        scheduled = verb in _SCHEDULING and _dated(text)
        if _NOT_DONE.search(match.group("adv")) or not (
                _SUPPORT_NOUNS.search(text) or _AMOUNT.search(text) or scheduled):
            return []
        if _PASSING_PAPERWORK.match(f"{verb}{match.group('rest')}"):
            return []  # "I've emailed you a returns label": done with the conversation, nothing to recall later
        if verb in _FILING and not _AMOUNT.search(text) and not scheduled and identifiers(text, ctx):
            return []  # "I've opened ticket TCK-558203": the ticket is kept as an identifier, the filing says no more
        actor = "The assistant" if match.group("actor").lower() == "i" else "Support"
        adverbs = re.sub(r"\s+(?:gone|went)\s+ahead\s+and", "", match.group("adv"))
        # Rewritten after the verb, so "you" reads as its object ("booked you in"), not a new subject.
        rest = rewrite_second_person(f"{verb}{match.group('rest')}", person)[len(verb):]
        content = f"{actor}{adverbs} {_PAST.get(verb, verb)}{rest}"
        return [_outcome(ctx, content, text, "support.outcome.action", 0.85)]
    if (match := _MONEY_PROMISE.match(text)) and _AMOUNT.search(text):  # "we'll refund £349 to your card"
        actor = "The assistant" if match.group("actor").lower() == "i" else "Support"
        verb = match.group("verb").lower()
        rest = rewrite_second_person(f"{verb}{match.group('rest')}", person)[len(verb):]
        return [_outcome(ctx, f"{actor} will {verb}{rest}", text, "support.outcome.promise", 0.75)]
    if (match := _PROMISE.match(text)) and _dated(match.group("rest")):
        actor = "The assistant" if text[:1].lower() == "i" else "Support"
        verb = " ".join(match.group("verb").lower().split())
        rest = rewrite_second_person(f"{verb} you{match.group('rest')}", person)[len(verb):]
        return [_outcome(ctx, f"{actor} will {verb}{rest}", text, "support.outcome.promise", 0.75)]
    if (match := _ARRANGED.match(text)) and _dated(text):
        return [_outcome(ctx, _support_update(text, person), text, "support.outcome.arranged", 0.75)]
    match = _PASSIVE.match(text) or _HEADLINE.match(text)
    if not match:
        return []
    before_verb = text[:match.start("verb")]
    if _NOT_DONE.search(before_verb) or not (_SUPPORT_NOUNS.search(text) or _AMOUNT.search(text)):
        return []
    return [_outcome(ctx, _support_update(text, person), text, "support.outcome.result", 0.8)]


# "Priyanka Shah has been removed", "I've removed 416-555-0127 from your account": what the agent took off the file.
_REMOVED = re.compile(
    r"^(?P<what>[^,;]{3,80}?)\s+(?:has|have)\s+(?:now\s+)?been\s+(?:removed|deleted|taken\s+off|erased|wiped|cleared"
    r"|purged)\b"
    r"|^(?:I|we)(?:'ve|\s+have)?\s+(?:now\s+|also\s+)?(?:removed|deleted|taken\s+off|erased|wiped|cleared|purged)\s+"
    r"(?P<what2>[^,;]{3,80}?)"
    r"(?:\s+(?:from|off|as)\b.*)?$",
    re.I,
)
_PERSON = re.compile(r"^(?-i:[A-Z][a-z'-]+(?:\s+[A-Z][a-z'-]+)+)$")
_STATES = re.compile(r"\b(?:is|are|was|were|will|goes|go)\b|:", re.I)
_YOUR_DETAIL = re.compile(r"^(?:also\s+)?your\s+(?P<noun>[\w -]{2,30}?)$", re.I)
# "I've removed your date of birth from our records": a detail named by its kind (lexicon.SUBJECT_NOUNS), not a fee.
_REMOVED_DETAIL = re.compile(r"\b(?:removed|deleted|erased)\s+(?:also\s+)?your\s+(?:(?:office|work|home|old|personal"
    r"|billing|delivery|shipping|postal|previous)\s+)?(?:" + "|".join(
    re.escape(noun) for noun in sorted(lexicon.SUBJECT_NOUNS, key=len, reverse=True)) + r")\b"
    # only from what is known of them: "from our mailing list", "from this order's instructions" keep it
    r"(?=\s+(?:from\s+(?:our|your|the)\s+(?:records?|account|file|system|profile|details|database)\b)|\s*[.;,]|\s*$)",
    re.I)


_TAKEN_FROM = re.compile(r"^\s*(?:from|off|out\s+of)\s+", re.I)
_AS_NOT_CONTACT = re.compile(r"^\s*as\s+(?!(?:an?|your|my)\s+(?:[\w-]+\s+)?contact\b)", re.I)
_YOURS = re.compile(r"\b(?:your|you|yours)\b", re.I)
_MINE = {"your": "my", "you": "me", "yours": "mine"}
# "The Amex ending 2006 has been removed": a thing of the customer's, by its name.
_REMOVED_THING = re.compile(r"^(?:the|your)\s+(?-i:[A-Z])[\w&'!+-]*(?:\s+[\w&'!+-]+){0,4}\s+(?:has|have)\s+(?:now\s+)?been"
                            r"\s+(?:removed|deleted|taken\s+off)\b", re.I)
_ENDING_DIGITS = re.compile(r"\s+(?:ending(?:\s+in)?|ends\s+in)\s+\d{2,6}$", re.I)


def _detail_subject(noun: str) -> str | None:
    """"date of birth" -> its subject; "office phone number" -> "phone:work": a detail of the kind it qualifies."""
    noun = " ".join(noun.lower().split())
    if subject := lexicon.SUBJECT_NOUNS.get(noun):
        return subject
    qualifier, _, rest = noun.partition(" ")
    subject = lexicon.SUBJECT_NOUNS.get(rest)
    qualified = qualified_detail_subject(subject, qualifier) if subject else None
    return qualified if qualified != subject else None  # "your old fee" names no detail


def _removed_elsewhere(removal: re.Match) -> bool:
    """"I've removed your mobile as the contact for deliveries", "... from the delivery instructions": the detail is
    kept, only where it is used changes."""
    tail = removal.string[removal.end("what" if removal.group("what") else "what2"):]
    if taken := _TAKEN_FROM.match(tail):
        return not RECORDS_AFTER.match(tail[taken.end():])  # from the records is a removal; from elsewhere, a move
    return bool(_AS_NOT_CONTACT.match(tail))


_ANOTHER_ACTION = re.compile(r"^(?:(?:I've|I\s+have|I|we've|we\s+have|we)\s+)?(?:also\s+)?(?:switched|moved|changed|updated|set"
                             r"|added|put|noted|transferred|replaced|swapped|used|saved|recorded)\b", re.I)


def removed_by_agent(text: str, ctx: RuleContext) -> list[Candidate]:
    """Retractions of the people and contact details the agent says it removed (only those: "the late fee has been
    removed" names nothing a memory holds)."""
    match = _REMOVED.match(text)
    if not match:
        return []
    found = []
    # "Tom Reyes is now your contact and Priyanka Shah has been removed": each thing named, never what else is said
    for part in re.split(r"\s+(?:and|&)\s+", (match.group("what") or match.group("what2")).strip()):
        if _STATES.search(part) or _ANOTHER_ACTION.match(part):
            continue  # "your login is now x@new.com and the old details have been removed", "I've deleted the old
            # address and switched you to x@new.com": x@new.com stays
        values = [value.group(0) for value in EMAIL.finditer(part)] + [
            value.group(0).strip() for value in PHONE.finditer(part) if sum(c.isdigit() for c in value.group(0)) >= 7]
        if not values and (detail := _YOUR_DETAIL.match(part)) and (subject := _detail_subject(detail.group("noun"))):
            # "I've removed your date of birth from our records": that detail of theirs, whatever it was
            # what was on file: a detail the customer gives in the same conversation is what the agent keeps
            whose = re.sub(r"^The\b", "the", ctx.person.possessive)
            found.append(ctx.candidate(f"The assistant removed {whose} {detail.group('noun')}",
                                       confidence=0.8, rule="support.removed", subject=subject, tags=("retraction",),
                                       action="delete", metadata={"old": True}))
            continue
        if not values and (thing := NAMED_THING.match(_ENDING_DIGITS.sub("", part))) and not _PERSON.match(
                thing.group("name")) and is_thing_name(thing.group("name"), ctx):
            # "The Amex ending 2006 has been removed": whatever memory names it
            said = rewrite_second_person(re.sub(r"^The\b", "the", part), ctx.person)
            found.append(ctx.candidate(f"The assistant removed {said}",
                                       confidence=0.8, rule="support.removed", tags=("retraction",),
                                       metadata={"value": thing.group("thing")}, action="delete"))
            continue
        one_name = re.fullmatch(r"(?-i:[A-Z][a-z'-]+)", part) and (_FROM_RECORDS.search(text)
                                                                   or _AND_THEIR_DETAILS.search(text))
        metadata = [{"value": value} for value in values] or (
            [{"value": part, "person": part}] if _PERSON.match(part) or one_name else [])
        if not metadata and not _removed_elsewhere(match):
            # "Your landline has been taken off your account", "I've wiped the work email": what the customer would
            # have asked for in their own words ("my landline"), read as their request is; never "from the delivery
            # instructions" or "as the contact for deliveries", which keep the detail and change where it is used
            found += [dataclasses.replace(candidate, content=f"The assistant removed {rewrite_second_person(part, ctx.person)}",
                                          metadata={**candidate.metadata, "rule": "support.removed",
                                                    **({"old": True} if candidate.subject else {})})
                      for candidate in forgotten_things(_YOURS.sub(lambda word: _MINE[word.group(0).lower()], part),
                                                        dataclasses.replace(ctx, sentence=text))]
            continue
        found += [ctx.candidate(f"The assistant removed {said['value']}", confidence=0.8, rule="support.removed",
                                tags=("retraction",), metadata=said, action="delete") for said in metadata]
    return found


_NEWS_LEAD = re.compile(r"^(?:(?:good|great|some|the)\s+)?news(?:\s+too|\s+as\s+well)?\s*[:,!.-]\s*|^too\s*[:,]\s*", re.I)


def _support_update(text: str, person) -> str:
    rewritten = rewrite_second_person(_NEWS_LEAD.sub("", text), person)
    if person.label.casefold() not in rewritten.casefold():
        rewritten = f"Support update for {person.label}: {rewritten}"
    return rewritten


# --- "Issue: ..." / "Resolution: ..." lines (any role) and CRM-style lines (system/tool) -------------------
_KEY_VALUE = re.compile(
    r"^\s*(?:[-*\u2022]\s*)?(?P<key>issue|problem|complaint|reason\s+for\s+contact|resolution|resolved|outcome"
    r"|actions?\s+taken|next\s+steps?|follow[- ]up|status|summary|root\s+cause|fix|refund|customer\s+name|name|e-?mail"
    r"|phone(?:\s+number)?|mobile(?:\s+number)?|(?:work|home|office)\s+(?:phone|number)(?:\s+number)?|landline"
    r"|work\s+e-?mail|(?:(?:home|shipping|delivery|billing|postal|mailing|office|work)\s+)?address)"
    r"\s*:\s*(?P<value>\S.*)$",
    re.I,
)
_CASE_TEMPLATES = {
    "issue": "Issue reported by {label}: {value}", "problem": "Issue reported by {label}: {value}",
    "complaint": "Issue reported by {label}: {value}", "reason for contact": "Issue reported by {label}: {value}",
    "resolution": "Resolution for {label}: {value}", "resolved": "Resolution for {label}: {value}",
    "outcome": "Resolution for {label}: {value}", "fix": "Resolution for {label}: {value}",
    "action taken": "Resolution for {label}: {value}", "actions taken": "Resolution for {label}: {value}",
    "refund": "Refund for {label}: {value}", "next step": "Follow-up for {label}: {value}",
    "next steps": "Follow-up for {label}: {value}", "follow-up": "Follow-up for {label}: {value}",
    "follow up": "Follow-up for {label}: {value}", "status": "Status of {possessive} case: {value}",
    "root cause": "Root cause of {possessive} issue: {value}", "summary": "Support summary for {label}: {value}",
}
_RECORD_ADDRESS_KINDS = {"shipping": "shipping", "delivery": "shipping", "billing": "billing", "office": "office",
                         "work": "office"}
_CASE_KINDS = {"issue": "issue", "problem": "issue", "complaint": "issue", "reason for contact": "issue",
               "status": "status", "root cause": "root_cause", "summary": "summary"}


def key_value_line(line: str, ctx: RuleContext) -> list[Candidate] | None:
    """Candidates for a labelled line, or None when the line is not one (it is then read as sentences)."""
    match = _KEY_VALUE.match(line)
    if not match:
        return None
    key = " ".join(match.group("key").lower().split())
    value = match.group("value").strip().rstrip(".")
    person = ctx.person
    if key in _CASE_TEMPLATES:
        value = rewrite_first_person(value, person, named=True) if ctx.role == "user" else rewrite_second_person(
            value, person)
        content = _CASE_TEMPLATES[key].format(label=person.label, possessive=person.possessive, value=value)
        outcome = _outcome(ctx, person.starting(content), value, f"support.case.{key.replace(' ', '_')}", 0.9)
        if key in _CASE_KINDS:
            outcome.metadata["kind"] = _CASE_KINDS[key]
        return [outcome]
    if ctx.role not in ("system", "tool"):
        return None  # a user writing "Name: ..." is read as an ordinary sentence
    if key in ("customer name", "name"):
        return [ctx.candidate(f"The user's name is {value}", confidence=0.85, rule="record.name", subject="name",
                              tags=("identity",), metadata={"value": value})]
    if key.replace("-", "") in ("email", "work email") and EMAIL.fullmatch(value):
        kind = "work" if key.startswith("work") else None
        label = "work email address" if kind else "email address"
        return [ctx.candidate(f"{person.possessive} {label} is {value}", confidence=0.9, rule="record.email",
                              subject=email_subject(kind), tags=("pii", "contact"), metadata={"pii": True})]
    if key.endswith("address"):
        kind = _RECORD_ADDRESS_KINDS.get(key.split()[0], "home")
        address = address_value(value)
        return [ctx.candidate(f"{person.possessive} {'office' if kind == 'office' else kind} address is {address}",
                              confidence=0.85, rule="record.address", subject=address_subject(kind),
                              tags=("pii", "contact", "address"), metadata={"pii": True, "kind": kind})
                ] if address else []
    if PHONE.fullmatch(value):
        kind = ("work" if key.startswith(("work", "office"))
                else "home" if key.startswith(("home", "landline")) else None)
        label = f"{kind} phone number" if kind else "phone number"
        return [ctx.candidate(f"{person.possessive} {label} is {value}", confidence=0.9, rule="record.phone",
                              subject=phone_subject(kind), tags=("pii", "contact"), metadata={"pii": True})]
    return []


def record_name(line: str) -> str | None:
    """The customer's name from a system/tool "Customer name: ..." line."""
    match = _KEY_VALUE.match(line)
    if match and " ".join(match.group("key").lower().split()) in ("customer name", "name"):
        return match.group("value").strip().rstrip(".") or None
    return None



# "The first installation slot is Thursday 12 March, 12pm to 4pm. Shall I book it?" / "Yes please": a slot the agent
# offers, with a date, becomes the customer's booking when they accept it.
_BOOK_OFFER = re.compile(r"\b(?:shall|should|can|may)\s+I\s+(?:book|reserve|confirm|go\s+ahead|lock)|\bwould\s+you\s+like\s+"
                         r"(?:me\s+to\s+book|to\s+book|that\s+(?:slot|one|time|date))|\bdoes\s+that\s+(?:work|suit)\b"
                         r"|\b(?:want|like)\s+me\s+to\s+(?:book|reserve)\b", re.I)

def accepted_offer(offer: str, answer: str, ctx: RuleContext) -> list[Candidate]:
    """The booking the customer's `answer` accepts from the agent's `offer`, or []."""
    if not _BOOK_OFFER.search(offer) or not agrees(answer):
        return []
    slots = [sentence for sentence in re.split(r"(?<=[.!?])\s+", offer)
             if "?" not in sentence and _dated(sentence) and find_dates(sentence, ctx.reference)]
    if len(slots) != 1 or len(mentions := find_dates(slots[0], ctx.reference)) > 1 and re.search(
            r"\bor\b", slots[0][mentions[0].end:mentions[-1].start]):
        return []  # none, or a choice of several ("Monday or Tuesday"): which was taken the answer must say
    slot = rewrite_second_person(slots[0].rstrip(" ."), ctx.person)
    return [_outcome(ctx, f"Booked for {ctx.person.label}: {slot}", slots[0], "support.outcome.accepted", 0.75)]
