"""What the customer has and uses: their organisation, plan or tier, tools and devices, and when they stop.

Each is keyed so a new value replaces the old one and only that one: "plan" (or "plan:<product>" when the
product is named: "our broadband package"), "tool:<purpose>" ("we use Zoom for meetings") or "tool:<name>",
"device:<kind>". Stopping ("we don't use Slack anymore", "we switched from Slack to Teams") retracts by value
within the "tool" or "plan" subjects.
"""

import re

from apps.extraction.extractors.base import Candidate
from apps.extraction.extractors.rules import lexicon
from apps.extraction.extractors.rules.context import SUBJECT_ADVERBS as ADV
from apps.extraction.extractors.rules.context import RuleContext
from apps.extraction.extractors.rules.dates import find_dates
from apps.extraction.extractors.rules.facts import org_value
from apps.extraction.extractors.rules.person import rewrite_first_person
from apps.extraction.extractors.rules.text import cut_value, normalise_key, proper_name

_WE = r"(?:I|we)"
_BE = r"(?:'m|'re|\s+am|\s+are)"
_ANYMORE = r"(?:\s+(?:any\s?more|any\s+longer|now))?"

# --- Organisation -------------------------------------------------------------------------------------
_ORG_KINDS = ("firm|company|business|practice|agency|studio|organi[sz]ation|startup|start-up|shop|store|restaurant|cafe"
              "|café|clinic|charity|nonprofit|non-profit|employer|brand|law\\s+firm|company\\s+name|business\\s+name"
              "|partnership|consultancy|surgery|salon|bakery|hotel|school|office")
_OUR_ORG = re.compile(rf"^(?:my|our)\s+(?:own\s+|little\s+|small\s+|family\s+)?(?P<kind>{_ORG_KINDS})(?:'s\s+name)?\s+"
                      r"(?P<link>is\s+(?:now\s+)?(?:called|named)|'s\s+(?:now\s+)?called|has\s+been\s+renamed(?:\s+to)?"
                      r"|is\s+now|is|'s)\s+(?P<org>.+)$", re.I)
# "our company is now called ...", "has been renamed ...": the same organisation under a new name, not a new employer.
_RENAMED = re.compile(r"\bnow\s+(?:called|named)\b|\brenamed\b", re.I)
_RUN_ORG = re.compile(rf"^{_WE}{ADV}\s+(?:run|own|manage|founded|co-founded|started|set\s+up)\s+(?:a|an|the|my|our)"
                      r"\s+(?P<what>[\w -]{1,40}?)\s+(?:called|named)\s+(?P<org>.+)$", re.I)
# "I own Haddad & Sons Plumbing", "I run the kitchen at Bluefin Bistro": a named organisation, capitalised.
_NAMED_ORG = r"(?P<org>(?-i:[A-Z][\w&'.-]*)(?:\s+(?:&|and|of|the|(?-i:[A-Z0-9][\w&'.-]*))){0,5})"
_OWN_NAMED_ORG = re.compile(rf"^{_WE}{ADV}\s+(?P<verb>own|founded|co-founded|set\s+up)\s+{_NAMED_ORG}(?:,.*)?$", re.I)
_RUN_PART_OF_ORG = re.compile(rf"^{_WE}{ADV}\s+(?:run|manage|head|lead)\s+(?:the|our)\s+(?P<part>(?-i:[a-z][a-z -]{{0,29}}?))\s+"
                              rf"(?:at|of|for)\s+{_NAMED_ORG}(?:,.*)?$", re.I)
# "I have the business account for Bello's Bakehouse", "the company account for Acme Ltd": the customer's business.
_ACCOUNT_FOR = re.compile(r"^I(?:'ve|\s+have|\s+hold|\s+manage|\s+run)\s+(?:got\s+)?(?:the|a|our)\s+(?:business|company|corporate"
                          r"|trading)\s+account\s+(?:for|of)\s+(?P<org>(?-i:[A-Z]).+)$", re.I)
_ON_BEHALF = re.compile(r"^I(?:'m|\s+am)\s+(?:calling|writing|contacting\s+you|reaching\s+out|getting\s+in\s+touch)"
                        r"\s+(?:from|on\s+behalf\s+of)\s+(?P<org>[A-Z].+)$")


# What makes a name a business's: "&", a legal form or a trade ("Haddad & Sons Plumbing", "Crumbs Bakery Ltd").
_BUSINESS_NAME = re.compile(r"&|\b(?:Ltd|Limited|LLC|LLP|Inc|Corp|GmbH|SAS|SARL|BV|AG|Co|Company|Group|Partners"
                            r"|Associates|Services|Solutions|Studios?|Consulting|Holdings|Plumbing|Electrical|Builders"
                            r"|Bakery|Cafe|Café|Restaurant|Bistro|Salon|Clinic|Dental|Logistics|Foods|Farms?|Garage"
                            r"|Motors|Design|Media|Agency|Labs?|Shop|Store|Trading|Supplies)\b")
_PAST = {"founded": "founded", "co-founded": "co-founded", "set up": "set up"}


# "please take it to our garage, Whitmore Motors in Stoke", "my vet is Meadowbank Vets": a business the customer uses.
_PROVIDER_KINDS = (r"garage|mechanic|vets?|dentist|surgery|pharmacy|chemist|bank|solicitors?|letting\s+agents?|estate\s+agents?"
                   r"|school|nursery|gym|salon|hairdresser|supplier|courier|broker|insurer|energy\s+supplier|provider")
_PROVIDER = re.compile(rf"\b(?:my|our)\s+(?:usual\s+|regular\s+|local\s+)?(?P<kind>{_PROVIDER_KINDS})(?:\s+is|,)\s+{_NAMED_ORG}",
                       re.I)


def named_provider(ctx: RuleContext, text: str) -> list[Candidate]:
    if not (match := _PROVIDER.search(text)) or not (org := org_value(match.group("org"))):
        return []
    kind = re.sub(r"(?<!s)s$", "", " ".join(match.group("kind").lower().split()))  # "vets", "solicitors": one
    return [ctx.candidate(f"{ctx.person.possessive} {kind} is {org}", confidence=0.8, rule="business.provider",
                          subject=f"provider:{normalise_key(kind)}", tags=("account",),
                          metadata={"value": org, "kind": kind})]


def _organisation(ctx: RuleContext, text: str) -> list[Candidate]:
    match = _OWN_NAMED_ORG.match(text) or _RUN_PART_OF_ORG.match(text)
    if match and match.re is _OWN_NAMED_ORG and not _BUSINESS_NAME.search(match.group("org")):
        match = None  # "I own Tesla, Apple and Nvidia", "I own Bitcoin": owned, but no business of theirs
    if match and (org := org_value(match.group("org"))):
        verb = " ".join(match.groupdict().get("verb", "").lower().split())
        rest = f"{_PAST.get(verb, verb + 's')} {org}" if verb else f"works at {org}"
        said = rewrite_first_person(text[:match.end("org")], ctx.person)  # "..., it's busy" is not part of it
        return [ctx.candidate(said if not verb else ctx.person.sentence(rest),
                              confidence=0.85, rule="business.organisation", subject="employer",
                              tags=("identity", "work"), metadata={"value": org, "kind": "company"})]
    match = _OUR_ORG.match(text) or _RUN_ORG.match(text) or _ON_BEHALF.match(text) or _ACCOUNT_FOR.match(text)
    if not match or not (org := org_value(match.group("org"))) or not org[:1].isupper() and not ctx.lowercase:
        return []
    if ctx.lowercase:
        org = proper_name(org)  # "our company is acme widgets": the user types everything in lowercase
    kind = " ".join((match.groupdict().get("kind") or match.groupdict().get("what") or "company").lower().split())
    if kind in ("company name", "business name", "employer"):
        kind = "company"
    if match.re is _ON_BEHALF:
        content = ctx.person.sentence(f"works at {org}")
    elif match.re is _ACCOUNT_FOR:
        content, kind = f"{ctx.person.possessive} business is {org}", "business"
    else:
        content = f"{ctx.person.possessive} {kind} is {org}"
    metadata = {"value": org, "kind": kind}
    if match.re is _OUR_ORG and _RENAMED.search(match.group("link")):
        metadata["renamed"] = True
    return [ctx.candidate(content, confidence=0.85, rule="business.organisation", subject="employer",
                          tags=("identity", "work"), metadata=metadata)]


# --- Plan or tier -------------------------------------------------------------------------------------
_PLAN_NOUNS = ("plan|tier|package|subscription|contract|bundle|membership|tariff|pricing|level|edition|licen[cs]e|account"
               "|deal|option")
_PLAN_PHRASE = rf"(?:the\s+|a\s+|an\s+|our\s+|my\s+|your\s+)?(?P<plan>[\w+&.'-]+(?:\s+[\w+&.'-]+){{0,4}}?)\s+(?P<noun>{_PLAN_NOUNS})s?\b"
_ON_PLAN = re.compile(rf"^{_WE}{_BE}?{ADV}\s+(?:on|subscribed\s+to|signed\s+up\s+(?:to|for))\s+{_PLAN_PHRASE}"
                      r"(?P<rest>.*)$", re.I)
_HAVE_PLAN = re.compile(rf"^{_WE}(?:'ve|\s+have)?{ADV}\s+(?:have|has|got|pay\s+for|subscribe\s+to|bought|purchased"
                        rf"|upgraded\s+to|downgraded\s+to|switched\s+to|moved\s+to|changed\s+to|gone\s+for|went\s+for"
                        rf"|opted\s+for|chose|picked|renewed)\s+{_PLAN_PHRASE}(?P<rest>.*)$", re.I)
_MY_PLAN = re.compile(rf"^(?:my|our)\s+(?:current\s+|new\s+)?(?P<product>[\w-]+\s+)?(?P<noun>{_PLAN_NOUNS})\s+(?:is|'s"
                      r"|is\s+now)\s+(?:the\s+|a\s+|an\s+)?(?P<plan>[\w+&.'-]+(?:\s+[\w+&.'-]+){0,4}?)"
                      rf"(?:\s+(?:{_PLAN_NOUNS}))?(?P<rest>(?:\s+(?:now|at\s+the\s+moment|currently))?(?:[\s,(].*)?)$",
                      re.I)
_UPGRADED_TO = re.compile(rf"^{_WE}(?:'ve|\s+have)?{ADV}\s+(?:upgraded|downgraded|switched|moved|changed)\s+(?:our\s+|my"
                          rf"\s+|the\s+)?(?:{_PLAN_NOUNS})?\s*to\s+(?:the\s+|a\s+)?(?P<plan>[\w+&.'-]+(?:\s+[\w+&.'-]+)"
                          r"{0,3}?)(?:\s+(?:plan|tier|package|subscription|edition|level))?(?P<rest>(?:[\s,].*)?)$", re.I)
_NOT_IN_PLAN_NAME = frozenset("about with for to on regarding re my our your their his her question questions problem "
                              "issue issues query help".split())
_NOT_PLAN_NAMES = frozenset("same old new current other different cheaper cheapest better basic-ish this that which what "
                            "your a an the my our monthly annual yearly".split())
# "our broadband package", "my mobile plan": the product the plan is for, so two products keep two plans.
PRODUCTS = lexicon._words(
    "mobile phone broadband internet fibre fiber tv cable landline energy electricity gas electric water insurance "
    "home car travel health dental pet life data storage hosting cloud email support maintenance warranty gym "
    "streaming music software")


def _plan_value(raw: str) -> str | None:
    words = raw.split()
    while words and words[0].lower() in ("the", "a", "an", "our", "my", "current", "new"):
        words.pop(0)
    value = " ".join(words).strip(" ,.")
    if not value or value.lower() in _NOT_PLAN_NAMES or words[0].lower() in lexicon.DEICTIC_OBJECTS:
        return None
    if _NOT_IN_PLAN_NAME.intersection(word.lower() for word in words):
        return None  # "I have a question about my health plan"
    return value


# "I'm a Gold member", "I reached Platinum status last month", "my membership level is Silver": a loyalty or membership
# level, named with a capital, one at a time.
_LEVEL_NAME = r"(?P<level>(?-i:[A-Z][\w+-]*))"
_MEMBER_LEVEL = re.compile(
    rf"^{_WE}{_BE}{ADV}\s+(?:an?\s+|now\s+an?\s+)(?:(?P<programme>(?-i:[A-Z][\w'&-]*)(?:\s+(?-i:[A-Z][\w'&-]*)){{0,2}})\s+)?"
    rf"{_LEVEL_NAME}\s+(?:member|cardholder|customer|status\s+member)"
    r"(?:\s+(?:now|already|since\s+.+))?(?:,.*)?$"
    rf"|^{_WE}(?:'ve|\s+have)?{ADV}\s+(?:reached|got|have|earned|hit|achieved|moved\s+up\s+to|been\s+upgraded\s+to)"
    rf"\s+{_LEVEL_NAME.replace('level', 'level2')}\s+(?:status|tier|level|membership)\b(?P<rest>.*)$"
    rf"|^(?:my|our)\s+(?:membership|loyalty|status|member)\s*(?:level|tier|status)?\s+is\s+(?:now\s+)?"
    rf"{_LEVEL_NAME.replace('level', 'level3')}(?:\s+(?:until|till|through|since|from)\s+.+)?$"
    # "my Gold status is active"
    rf"|^(?:my|our)\s+{_LEVEL_NAME.replace('level', 'level4')}\s+(?:status|membership|tier)\s+is\s+(?:now\s+)?active\b.*$",
    re.I,
)


def _membership(ctx: RuleContext, text: str) -> list[Candidate]:
    match = _MEMBER_LEVEL.match(text)
    if not match:
        return []
    level = match.group("level") or match.group("level2") or match.group("level3") or match.group("level4")
    if level.lower() in lexicon.DEICTIC_OBJECTS or level.lower() in _NOT_PLAN_NAMES:
        return []
    programme = match.group("programme")
    status = f"has {level} membership status" + (f" in {programme}" if programme else "")  # "Solenne Circle Gold"
    return [ctx.candidate(ctx.person.sentence(status), confidence=0.85,
                          rule="business.membership", subject="membership", tags=("account",),
                          metadata={"value": level})]


def _plan(ctx: RuleContext, text: str) -> list[Candidate]:
    if membership := _membership(ctx, text):
        return membership
    if (switch := _PUT_ON.match(text)) and (value := _plan_value(switch.group("plan"))):
        return [ctx.candidate(ctx.person.sentence(f"wants their {switch.group('product')} on {value}"),
                              confidence=0.8, rule="business.plan", subject="plan", tags=("account", "plan"),
                              metadata={"value": value})]
    match = _ON_PLAN.match(text) or _HAVE_PLAN.match(text) or _MY_PLAN.match(text) or _UPGRADED_TO.match(text)
    if not match or not (value := _plan_value(match.group("plan"))):
        return []
    if match.re is _UPGRADED_TO and not re.search(r"\b(?:upgraded|downgraded)\b", text, re.I) and not re.search(
            rf"\b(?:{_PLAN_NOUNS})s?\b", text, re.I):
        return []  # "I've switched to a Pixel 8", "moved to Dr Patel's practice": a plan only when it says so
    noun = (match.groupdict().get("noun") or "plan").lower()
    if noun in ("account", "deal", "option") and match.re is not _MY_PLAN:
        return []  # "I have a savings account", "we got a good deal": not a plan name
    if noun in ("account", "deal", "option") and not (value[:1].isupper() or value[:1].isdigit() or re.search(
            rf"{re.escape(value)}\s+(?:{_PLAN_NOUNS})\b", text, re.I)):
        return []  # "my account is under my maiden name", "my account is locked": no plan named
    product = (match.groupdict().get("product") or "").strip().lower()
    first = value.split()[0].lower()
    if not product and first in PRODUCTS and len(value.split()) == 1:
        product = first  # "we're on the broadband package": the product, with no plan name
    subject = f"plan:{product}" if product in PRODUCTS else "plan"
    return [ctx.candidate(rewrite_first_person(text, ctx.person), confidence=0.85, rule="business.plan",
                          subject=subject, tags=("account", "plan"), metadata={"value": value})]


# --- Tools and devices --------------------------------------------------------------------------------
_USE = re.compile(rf"^{_WE}{ADV}\s+(?:use|'re\s+using|are\s+using|'m\s+using|am\s+using|rely\s+on|run\s+on"
                  r"|switched\s+to|moved\s+to|migrated\s+to)\s+(?P<tool>.+?)(?:\s+(?:for|to)\s+(?P<purpose>.+?))?"
                  r"(?:\s+(?:now|these\s+days|at\s+work|every\s+day|daily))?$", re.I)
_ON_PLATFORM = re.compile(rf"^I{_BE}{ADV}\s+on\s+(?:an?\s+)?(?P<tool>(?:android|iphone|ios|ipados|windows|mac|macos|linux"
                          r"|chromebook|chromeos|ipad)(?:\s+[\w.+-]+){0,2})$", re.I)
_HAVE_DEVICE = re.compile(rf"^{_WE}(?:'ve|\s+have)?{ADV}\s+(?:have|got|own|bought|got|switched\s+to|moved\s+to|drive|ride"
                          r"|lease)\s+(?:an?\s+|the\s+"
                          r"|two\s+|three\s+|my\s+)?(?:new\s+|old\s+|second-hand\s+|refurbished\s+)?(?P<device>.+)$", re.I)
_NOT_OWN_VEHICLE = frozenset("hire hired rental rented courtesy loan loaned replacement park parking space booked "
                             "wash share club".split())


def _own_vehicle(device: str, kind_word: str | None) -> bool:
    """A vehicle of the user's: the vehicle word ends the phrase ("a 2019 Skoda estate car", or "my car is a ...")
    and no word makes it someone else's or something else ("hire car", "car park space")."""
    words = [word.lower().strip(",.") for word in device.split()]
    if _NOT_OWN_VEHICLE.intersection(words):
        return False
    return bool(kind_word) or (bool(words) and lexicon.DEVICE_KINDS.get(words[-1]) == "vehicle") or any(
        word in lexicon.VEHICLE_MAKES for word in words[:3])  # "a 2024 Kia EV6"


_DRIVES = re.compile(rf"^{_WE}{ADV}\s+(?:drive|ride)\s+(?:an?\s+|the\s+|my\s+|our\s+)(?:new\s+|old\s+)?(?P<device>.+)$",
                     re.I)
# "I threw the FRITZ!Box away", "we sold the old Canon printer": a named device the user no longer has.
_DISPOSED = re.compile(rf"^{_WE}(?:'ve|\s+have)?{ADV}\s+(?:threw|thrown|sold|binned|scrapped|recycled|gave|given"
                       r"|got\s+rid\s+of|returned|traded\s+in)\s+(?:away\s+)?(?:the|my|our|that)\s+(?P<device>[^,;]+?)"
                       r"(?:\s+away)?(?:\s*,.*)?$", re.I)
_ON_DEVICE = re.compile(r"\b(?:on|with|from)\s+(?:an?\s+|my\s+|the\s+)?(?P<device>[A-Za-z][\w-]*(?:\s+[\w+-]+){0,2})$")
_PUT_ON = re.compile(r"^(?:please\s+)?(?:put|switch|move|change)\s+(?:the|my|our)\s+(?P<product>[\w-]+)\s+(?:on|onto|to)\s+"
                     rf"(?:the\s+)?(?P<plan>[\w+&.'-]+(?:\s+[\w+&.'-]+){{0,3}}?)(?:\s+(?:{_PLAN_NOUNS}))?$", re.I)
_MY_DEVICE = re.compile(r"^(?:my|our)\s+(?P<kind>[\w-]+)\s+is\s+(?:an?|the)\s+(?P<device>.+)$", re.I)
# "the bedroom TV is an LG C3", "phone is an iPhone 15 Pro" (a name may start "iP", "eR"), "my own router, an Asus RT-AX86U": a named product
_NAMED_DEVICE = re.compile(r"(?:^|,\s*|\band\s+|(?<=\s)(?=(?:my|our)\s))(?:(?:my|our|the)\s+)?(?:(?-i:[a-z-]+)\s+)?(?P<kind>[\w-]+)(?:\s+(?:is|'s)|,)"
                           r"\s+(?:an?|the)\s+(?P<device>(?-i:[A-Z]|[a-z][A-Z])[\w+!-]*(?:\s+(?:(?-i:[A-Z0-9])[\w+!-]*)){0,3})", re.I)
_TOOL_STOPS = frozenset("for to and but because since so which when if as with at on in now last this next yesterday through from starting "
                        "today recently ago already instead anymore any company-wide altogether either completely "
                        "entirely".split())
_NOT_TOOLS = frozenset(["it", "this", "that", "them", "the app", "the website", "your app", "your website", "the site",
                        "cash", "the same", "something", "anything", "both", "one", "my phone", "my laptop"])
_SWITCH = re.compile(rf"^{_WE}(?:'ve|\s+have)?{ADV}\s+(?:switched|moved|migrated|changed|gone\s+over)\s+from\s+(?P<old>.+?)"
                     r"\s+to\s+(?P<new>.+)$"
                     # "we've dropped Slack company-wide and moved to Microsoft Teams"
                     rf"|^{_WE}(?:'ve|\s+have)?{ADV}\s+(?:dropped|ditched|stopped\s+using|cancell?ed|got\s+rid\s+of"
                     r"|moved\s+away\s+from)\s+(?P<old2>.+?),?\s+and\s+(?:have\s+)?(?:moved|switched|changed|migrated"
                     # "... and moved everything over to FreeAgent"
                     r"|gone|went)(?:\s+(?:everything|it\s+all|all|things|our\s+[\w-]+))?(?:\s+over)?\s+to\s+(?P<new2>.+)$"
                     # "we replaced Zendesk with Freshdesk"
                     rf"|^{_WE}(?:'ve|\s+have)?{ADV}\s+replaced\s+(?P<old3>.+?)\s+with\s+(?P<new3>.+)$", re.I)
_STOPPED = re.compile(rf"^{_WE}\s+no\s+longer\s+(?:use|have|need|run)\s+(?P<old>.+?){_ANYMORE}$"
                      # "I don't have a car" says no more than that: only "anymore" makes a plain negation a change
                      rf"|^{_WE}\s+(?:don't|do\s+not|don't\s+really)\s+(?:use|have|need|run)\s+(?P<old4>.+?)"
                      r"\s+(?:any\s?more|any\s+longer|now)$"
                      rf"|^{_WE}(?:'ve|\s+have)?\s+(?:stopped\s+using|dropped|ditched|got\s+rid\s+of|moved\s+away\s+from"
                      rf"|cancell?ed|given\s+up(?:\s+on)?)\s+(?P<old2>.+?){_ANYMORE}$"
                      rf"|^{_WE}{_BE}\s+(?:no\s+longer|not)\s+(?:on|using|with)\s+(?P<old3>.+?){_ANYMORE}$", re.I)


# What was stopped and then taken up again, with nothing else named: "... but rejoined in January", "... but went back
# to it" ("... and went back to Spotify" stops the first and names another).
_RESUMED = re.compile(r"\b(?:but|then|and|since)\s+(?:\w+\s+){0,3}?(?:re-?joined|resumed|restarted|re-?subscribed|re-?activated"
                      r"|reinstated|(?:went|gone|came|come)\s+back(?!\s+to\s+(?!(?:it|them|that|you)\b))"
                      r"|signed\s+(?:back\s+)?up\s+again|(?:started|using)\s+(?:it\s+|them\s+)?again)\b", re.I)


def _name_of(raw: str, max_words: int = 4) -> str | None:
    value = cut_value(raw, _TOOL_STOPS, max_words=max_words)
    value = re.sub(r"^(?:the|a|an|our|my)\s+", "", value, flags=re.I)
    if not value or value.lower() in _NOT_TOOLS or value.split()[0].lower() in lexicon.DEICTIC_OBJECTS:
        return None
    return value


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeio" else "a"


def _device_kind(device: str) -> str | None:
    words = [word.lower().strip(",.") for word in device.split()]
    for word in words:
        if word in lexicon.DEVICE_KINDS:
            return lexicon.DEVICE_KINDS[word]
    if words and any(word in lexicon.VEHICLE_MAKES for word in words[:3]) and re.search(r"[A-Z\d]", device):
        return "vehicle"  # "a Peugeot 3008", "a 2021 Skoda Octavia estate"
    return None


# "my wife drives a Toyota Yaris, reg ...", "the courier's Ford Transit, reg ...": someone else's vehicle.
_SOMEONE_ELSES_VEHICLE = re.compile(rf"\b(?:his|her|their|he|she|they|the\s+\w+'s|(?:my|our)\s+(?:{'|'.join(map(re.escape, lexicon.CONTACT_RELATIONS))}))\b",
                                    re.I)
# "honda civic, reg KV68 PNZ", "a grey Volvo XC40, registration YB21 KDF": a make and model with its number plate.
_VEHICLE_WITH_PLATE = re.compile(r"(?:^|,\s*|\ba\s+|\ban\s+)(?P<device>(?:[a-z]+\s+)?(?:\d{4}\s+)?(?P<make>[\w-]+)\s+[\w-]+"
                                 r"(?:\s+[\w-]+)?),?\s+(?:reg|registration|plate|number\s+plate)\b", re.I)


def _tools(ctx: RuleContext, text: str) -> list[Candidate]:
    person = ctx.person
    if match := _SWITCH.match(text):
        old = _name_of(match.group("old") or match.group("old2") or match.group("old3"))
        new = _name_of(match.group("new") or match.group("new2") or match.group("new3"))
        if not old or not new:
            return []
        kind = "plan" if re.search(rf"\b(?:{_PLAN_NOUNS})\b", f"{old} {new}", re.I) else "tool"
        # The new value takes the old one's subject when the old one is known (see extractor.pin_replacements),
        # so it supersedes exactly that memory.
        return [ctx.candidate(person.sentence(f"now uses {new}") if kind == "tool" else person.sentence(
                              f"is now on {new}"), confidence=0.85, rule=f"business.{kind}.switch",
                              subject=f"{kind}:{normalise_key(new)}" if kind == "tool" else "plan", tags=(kind,),
                              metadata={"value": new, "replaces": old, "family": kind})]
    if match := _DISPOSED.match(text):
        device = re.sub(r"^(?:old|broken|previous)\s+", "", match.group("device").strip(), flags=re.I)
        if re.search(r"[A-Z]", device) and len(device.split()) <= 4:  # a named product ("the FRITZ!Box"), not "my keys"
            return [ctx.candidate(person.sentence(f"no longer has the {device}"), confidence=0.8,
                                  rule="business.device.gone", subject="device", tags=("retraction",),
                                  metadata={"value": device}, action="delete")]
    if match := _STOPPED.match(text):
        old = _name_of(next(value for key, value in match.groupdict().items() if value))
        if not old or _RESUMED.search(text + (ctx.sentence.partition(text)[2] if text in ctx.sentence else "")):
            return []  # "I cancelled my gym membership last year but rejoined in January"
        kind = "plan" if re.search(rf"\b(?:{_PLAN_NOUNS})s?\b", old, re.I) else "tool"
        if kind == "tool" and not ctx.lowercase and not re.search(r"[A-Z]", old):
            return []  # "I don't have the receipt anymore", "... time anymore": no product named, nothing to retract
        value = re.sub(rf"\s+(?:{_PLAN_NOUNS})s?$", "", old, flags=re.I) if kind == "plan" else old
        return [ctx.candidate(person.sentence(f"no longer uses {old}"), confidence=0.85, rule=f"business.{kind}.stop",
                              subject=kind, tags=("retraction",), metadata={"value": value}, action="delete")]
    if (match := _VEHICLE_WITH_PLATE.search(text)) and match.group("make").lower() in lexicon.VEHICLE_MAKES and not (
            _HAVE_DEVICE.match(text) or _MY_DEVICE.match(text) or _DRIVES.match(text)
            or _SOMEONE_ELSES_VEHICLE.search(text[:match.start()])):
        device = match.group("device")
        return [ctx.candidate(f"{ctx.person.possessive} vehicle is {_article(device)} {device}", confidence=0.75,
                              rule="business.device", subject="device:vehicle", tags=("device",),
                              metadata={"value": device})]
    if (match := _DRIVES.match(text)) and re.search(r"[A-Z]", match.group("device")):
        device = cut_value(match.group("device"), _TOOL_STOPS, max_words=6)  # "I drive a Honda Civic": a vehicle
        return [ctx.candidate(rewrite_first_person(text, ctx.person), confidence=0.8, rule="business.device",
                              subject="device:vehicle", tags=("device",), metadata={"value": device})]
    if (match := _HAVE_DEVICE.match(text) or _MY_DEVICE.match(text)) and (kind := _device_kind(
            f"{match.groupdict().get('kind') or ''} {match.group('device')}")):
        device = cut_value(match.group("device"), _TOOL_STOPS, max_words=6)
        if kind == "vehicle" and not _own_vehicle(device, match.groupdict().get("kind")):
            return []  # "I've got a hire car while mine is in the garage", "a car park space", "a van booked"
        return [ctx.candidate(rewrite_first_person(text, ctx.person), confidence=0.8, rule="business.device",
                              subject=f"device:{kind}", tags=("device",), metadata={"value": device})]
    if (match := _NAMED_DEVICE.search(text)) and (kind := _device_kind(match.group("kind"))) and kind != "vehicle" \
            and not re.match(r"(?i)(?:your|their|his|her)\b", text[match.start():].lstrip(" ,")):
        device, said = match.group("device"), match.group("kind")
        said = said if said.isupper() else said.lower()  # "TV", "phone"
        return [ctx.candidate(f"{ctx.person.possessive} {said} is {_article(device)} {device}",
                              confidence=0.8, rule="business.device", subject=f"device:{kind}", tags=("device",),
                              metadata={"value": device})]
    if (match := _ON_DEVICE.search(text)) and (kind := _device_kind(match.group("device"))) and re.search(
            r"\d|[A-Z]", match.group("device")):  # "I use your app on iPhone 12"
        return [ctx.candidate(rewrite_first_person(text, ctx.person), confidence=0.75, rule="business.device",
                              subject=f"device:{kind}", tags=("device",), metadata={"value": match.group("device")})]
    if match := _ON_PLATFORM.match(text):
        kind = _device_kind(match.group("tool"))
        if not kind:
            return []
        return [ctx.candidate(rewrite_first_person(text, ctx.person), confidence=0.75, rule="business.device",
                              subject=f"device:{kind}", tags=("device",), metadata={"value": match.group("tool")})]
    match = _USE.match(text)
    if not match or not (tool := _name_of(match.group("tool"))):
        return []
    purpose = match.group("purpose")
    if not (tool[:1].isupper() or purpose or _device_kind(tool)):
        return []  # "I use cash", "we use paper": too vague to be a tool without a purpose or a name
    if kind := _device_kind(tool):
        subject = f"device:{kind}"
    else:
        purpose_key = normalise_key(cut_value(purpose, _TOOL_STOPS - {"for", "to"}, max_words=4)) if purpose else ""
        subject = f"tool:{purpose_key or normalise_key(tool)}"
    return [ctx.candidate(rewrite_first_person(text, ctx.person), confidence=0.8, rule="business.tool", subject=subject,
                          tags=("tool",), metadata={"value": tool})]


_COUNT = (r"(?P<count>\d{1,6}|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty"
          r"|fifty|a\s+hundred)")
_QUANTITY = re.compile(
    rf"^{_WE}(?:'ve|\s+have|'re|\s+are|'ll|\s+will)?{ADV}\s+(?:have|has|got|need|needs|pay\s+for|paying\s+for|bought|use"
    rf"|using|run|running|employ|manage|booked|reserved|ordered|be|(?P<expecting>expect|expecting|anticipate|anticipating"
    rf"|catering\s+for|hosting|inviting|seating))\s+(?:about\s+|around\s+|roughly\s+|approximately\s+|exactly\s+|up\s+to\s+)?"
    rf"{_COUNT}\s+(?P<unit>seats|licen[cs]es|users|lines|sims|accounts|devices|locations|sites|branches|stores|staff"
    r"|employees|people|rooms|nights|guests|travell?ers|passengers|adults|children|kids|vehicles|cars|properties"
    r"|units|cases|pallets|boxes|(?!(?:minutes|hours|days|weeks|months|years|times|questions|problems|issues|kids"
    r"|items|things|ways|options|orders|tickets|calls|emails|messages)\b)[a-z]{3,}s)\b.*$",
    re.I,
)


# "we're cutting from 12 licences down to 9", "we're going up from 40 seats to 55": the count it becomes.
_COUNT_CHANGE = re.compile(
    rf"^{_WE}(?:'re|\s+are|'ll|\s+will|'d\s+like\s+to|\s+want\s+to|\s+need\s+to)?{ADV}\s+(?:be\s+)?(?:cutting|reducing|going"
    r"|dropping|increasing|moving|growing|expanding|scaling|upgrading|downgrading|cut|reduce|go|drop|increase|move|grow"
    r"|expand|scale|upgrade|downgrade|changing|change)\s+(?:(?:back\s+)?(?:down|up)\s+)?(?:the\s+\w+\s+)?from\s+(?P<old>\d{1,6})\s+"
    r"(?P<unit>[a-z]{3,}s)\s+(?:(?:back\s+)?(?:down|up)\s+)?to\s+(?:just\s+|only\s+)?(?P<count>\d{1,6})\b(?!\s*(?:%|per|a\b))",
    re.I,
)


def _quantity(ctx: RuleContext, text: str) -> list[Candidate]:
    """"We have 12 seats", "we're 4 travellers", "we're cutting from 12 licences to 9": a count that a later one
    replaces."""
    match = _QUANTITY.match(text) or _COUNT_CHANGE.match(text)
    if not match or match.group("unit").lower() in _NOT_COUNTED:
        return []
    if match.re is _COUNT_CHANGE and find_dates(text, None):
        return []  # "from 2 cars to 3 cars next year": a change to come, not the count now
    if match.groupdict().get("expecting") and match.group("unit").lower() not in _PEOPLE_UNITS:
        return []  # "we're expecting 2 parcels today": a delivery, not how many they are
    unit = match.group("unit").lower().replace("licences", "licenses").replace("travellers", "travelers")
    return [ctx.candidate(rewrite_first_person(text, ctx.person), confidence=0.8, rule="business.quantity",
                          subject=f"quantity:{unit}", tags=("account",), metadata={"value": match.group("count")})]


_NOT_COUNTED = frozenset("minutes hours days weeks months years times pounds dollars euros percent".split())
# Who is expected, hosted or catered for is a count of people: "we're expecting about 110 guests".
_PEOPLE_UNITS = frozenset("guests people attendees delegates visitors participants children kids adults covers diners "
                          "staff employees users members students pupils passengers travellers travelers starters hires "
                          "joiners recruits volunteers clients customers patients residents tenants families couples "
                          "players".split())


_PAY_WITH = re.compile(rf"^{_WE}{ADV}(?:\s+(?:always|usually|normally|mostly|only))?\s+(?:pay|paid|'ll\s+pay|will\s+pay)\s+(?:with|by|via|using|through)\s+(?P<method>.+)$"
                       rf"|^(?:please\s+)?(?:use|charge|bill)\s+(?P<method2>(?:my|our|the)\s+.+?)\s+(?:as\s+(?:the|my|our)\s+"
                       r"default|from\s+now\s+on|going\s+forward|for\s+(?:future|all)\s+\w+)\b.*$"
                       r"|^(?:my|our)\s+(?:default\s+|preferred\s+)?payment\s+(?:method|card)\s+is\s+(?:now\s+)?(?P<method3>.+)$",
                       re.I)
_CLOSED_ACCOUNT = re.compile(rf"^{_WE}(?:'ve|\s+have)?{ADV}\s+(?:closed|cancell?ed|deleted|shut)\s+(?:my|our)\s+(?P<what>[A-Z]"
                             r"[\w.&-]*(?:\s+[A-Z][\w.&-]*)?)\s+account\b.*$")


# "Direct debit please, on the 20th of each month": the answer to how they will pay, and when.
_DEBIT_ANSWER = re.compile(r"^(?:(?:and|also|oh)[\s,]+)*(?:(?:by|via|through)\s+)?(?P<method>direct\s+debit|standing\s+order|card"
                           r"|bank\s+transfer|paypal)(?:\s+(?:please|pls|is\s+best|is\s+fine))?(?:[,\s]+(?:on|taken\s+on|every)"
                           r"\s+(?:the\s+)?(?P<day>\d{1,2}(?:st|nd|rd|th)?)(?:\s+of\s+(?:each|every|the)\s+month)?)?"
                           r"(?:[,\s]+if\s+(?:that's|that\s+is|it's)\s+(?:possible|ok(?:ay)?))?$", re.I)


def _payment(ctx: RuleContext, text: str) -> list[Candidate]:
    """How the customer pays ("I always pay with PayPal", "use my Amex ending 1009 as the default"): one method."""
    if (answer := _DEBIT_ANSWER.match(text.rstrip(" .!"))) and (answer.group("day") or re.match(
            r"(?:direct|standing)\b", answer.group("method"), re.I)):  # "by card please" may pay once
        method = " ".join(answer.group("method").lower().split())
        when = f" on the {answer.group('day')} of each month" if answer.group("day") else ""
        return [ctx.candidate(ctx.person.sentence(f"pays by {method}{when}"), memory_type="preference",
                              confidence=0.8, rule="business.payment", subject="payment_method", tags=("payment",),
                              metadata={"value": method})]
    if match := _CLOSED_ACCOUNT.match(text):
        return [ctx.candidate(ctx.person.sentence(f"closed their {match.group('what')} account"), confidence=0.8,
                              rule="business.payment.closed", subject="payment_method", tags=("retraction",),
                              metadata={"value": match.group("what")}, action="delete")]
    match = _PAY_WITH.match(text)
    if not match:
        return []
    method = cut_value(match.group("method") or match.group("method2") or match.group("method3"),
                       _TOOL_STOPS - {"with"}, max_words=6)
    if not method or method.split()[0].lower() in lexicon.DEICTIC_OBJECTS:
        return []
    content = rewrite_first_person(text, ctx.person) if match.group("method") or match.group("method3") else \
        ctx.person.sentence(f"wants {rewrite_first_person(method, ctx.person, named=True)} used as the default "
                            f"payment method")
    return [ctx.candidate(content, memory_type="preference", confidence=0.8,
                          rule="business.payment", subject="payment_method", tags=("payment",),
                          metadata={"value": method})]


BUSINESS_RULES = (_organisation, named_provider, _plan, _quantity, _payment, _tools)
