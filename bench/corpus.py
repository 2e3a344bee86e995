"""Synthetic but plausible memories for the benchmark: short sentences from templates and word lists.

Everything derives from a seeded `random.Random`, so the same (seed, n, users) gives the same corpus.
Each user has a small profile (city, job, pet, allergy, ...) whose facts are stored first; the rest
of the user's memories are drawn from a pool of fact, preference, episode and procedure templates.
"""

import random
import re
from dataclasses import dataclass

FIRST_NAMES = (
    "Anna Ben Carla Dev Elena Farid Grace Hiro Ines Jonas Kemal Lena Marco Nadia Omar Priya Quinn Rosa Sami "
    "Tara Umar Vera Wen Xavier Yara Zoe Aiko Bruno Chloe Diego Emma Felix Greta Hugo Ivy Jamal Keira Luca Maya "
    "Noah Olga Pablo Rina Stefan Tomas Uma Viktor Willa Yusuf Zara Amir Bianca Caleb Dalia Erik Fatima Gabriel "
    "Hana Igor Julia Kai Leila Mateo Nora Oscar Paula Ravi Sofia Theo Ulla Valentina Wei Ximena Yann Zainab"
).split()
CITIES = (
    "Lisbon;Porto;Madrid;Barcelona;Paris;Lyon;Berlin;Munich;Hamburg;Vienna;Zurich;Geneva;Milan;Rome;Naples;"
    "Amsterdam;Rotterdam;Brussels;Copenhagen;Oslo;Stockholm;Helsinki;Dublin;London;Manchester;Edinburgh;Prague;"
    "Warsaw;Krakow;Budapest;Athens;Istanbul;Cairo;Nairobi;Lagos;Johannesburg;Toronto;Montreal;Vancouver;Boston;"
    "Chicago;Denver;Austin;Seattle;Portland;Miami;Mexico City;Bogota;Lima;Santiago;Buenos Aires;Sao Paulo;"
    "Tokyo;Osaka;Seoul;Taipei;Singapore;Bangkok;Hanoi;Manila;Jakarta;Sydney;Melbourne;Auckland;Mumbai;Bangalore"
).split(";")
JOBS = (
    "nurse;software engineer;data analyst;teacher;architect;accountant;product manager;graphic designer;"
    "pharmacist;civil engineer;journalist;chef;lawyer;electrician;physiotherapist;marketing lead;"
    "research scientist;veterinarian;pilot;dentist;sales manager;UX researcher;translator;photographer;"
    "project manager;mechanic;social worker;financial advisor;carpenter;biologist;librarian;firefighter"
).split(";")
WORKPLACES = (
    "a hospital;a bank;a startup;a university;a logistics company;an insurance firm;a design studio;"
    "a city council;a law firm;a restaurant;a school;a consultancy;a game studio;a pharmacy;an airline;a museum"
).split(";")
PETS = "dog cat rabbit parrot hamster tortoise goldfish ferret".split()
PET_NAMES = "Biscuit Luna Max Pepper Milo Nala Oscar Daisy Rocky Mochi Ziggy Olive Bruno Coco Pixel Waffles".split()
ALLERGENS = (
    "peanuts;shellfish;gluten;lactose;penicillin;pollen;cat hair;eggs;soy;sesame;tree nuts;strawberries;"
    "dust mites;bee stings"
).split(";")
LANGUAGES = (
    "English Spanish Portuguese French German Italian Dutch Polish Turkish Arabic Hindi Japanese Korean Mandarin "
    "Swahili"
).split()
DIETS = "vegetarian;vegan;pescatarian;halal;kosher;low-carb;gluten-free;Mediterranean".split(";")
PROGRAMMING = "Python Rust Go TypeScript Java Kotlin Swift Elixir Haskell C# Ruby Scala".split()
TIMEZONES = "UTC;CET;EET;GMT;EST;CST;PST;JST;IST;AEST".split(";")
MONTHS = "January February March April May June July August September October November December".split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
RELATIVES = (
    "sister;brother;mother;father;partner;wife;husband;daughter;son;grandmother;cousin;best friend;manager;"
    "colleague;neighbour"
).split(";")
HOBBIES = (
    "rock climbing;cycling;trail running;baking sourdough;gardening;chess;watercolour painting;bouldering;"
    "birdwatching;yoga;salsa dancing;woodworking;photography;surfing;knitting;board games;sailing;pottery;"
    "playing the piano;playing guitar;hiking;swimming;tennis;fishing;camping;skiing;volunteering at a shelter"
).split(";")
FOODS = (
    "sushi;ramen;tacos;pizza;curry;paella;falafel;dumplings;pho;lasagne;burritos;risotto;kimchi;pad thai;"
    "croissants;olives;mushrooms;coriander;blue cheese;spicy food;liver;oysters;aubergine;porridge;beetroot"
).split(";")
CUISINES = "Italian Japanese Mexican Thai Indian Lebanese Korean Ethiopian Greek Vietnamese Peruvian French".split()
DRINKS = "black coffee;green tea;oat milk lattes;espresso;chai;matcha;sparkling water;hot chocolate;mint tea".split(";")
GENRES = "jazz;techno;classical;indie rock;hip hop;folk;k-pop;metal;bossa nova;reggae;country;opera".split(";")
CHANNELS = "email;Slack;SMS;phone calls;WhatsApp;video calls;push notifications".split(";")
STYLES = "short bullet-point;detailed;formal;casual;step-by-step;plain-language".split(";")
TOPICS = (
    "tax returns;mortgage rates;kubernetes upgrades;the quarterly budget;visa requirements;retirement savings;"
    "marathon training plans;sleep problems;learning Japanese;a kitchen renovation;electric cars;solar panels;"
    "the onboarding checklist;GDPR compliance;database backups;the product roadmap;a job interview;"
    "wedding planning;a new laptop;health insurance;the company offsite;noise-cancelling headphones;"
    "the school application;a broken dishwasher;train tickets;a refund for the order;invoice numbering"
).split(";")
PRODUCT_AREAS = "checkout;billing;search;login;dashboard;mobile app;notifications;reporting;settings;export".split(";")
EVENTS = (
    "dentist appointment;job interview;performance review;team dinner;doctor's visit;parent-teacher meeting;"
    "flight delay;car service;birthday party;yoga retreat;hackathon;client workshop"
).split(";")
SUBSCRIPTIONS = "streaming;gym;newspaper;meal kit;cloud storage;language app;music;coworking".split(";")
TOOLS = "Jenkins;GitHub Actions;Terraform;Ansible;ArgoCD;GitLab CI;Make;Docker Compose".split(";")
TEAMS = "the platform team;finance;legal;the on-call engineer;customer support;the security team;HR".split(";")
DOC_KINDS = "contract;invoice;incident report;travel request;design review;release notes".split(";")
DEVICES = "a MacBook Pro;a ThinkPad;a Linux desktop;an iPad;a Chromebook;a Surface laptop".split(";")
CARS = "Volvo;Toyota;Tesla;Renault;Fiat;Honda;Skoda;Kia;Volkswagen;Mini".split(";")
SUBJECTS = "biology;economics;mechanical engineering;history;computer science;law;physics;architecture;music".split(";")
SKILLS = "Spanish;Japanese;the cello;data science;public speaking;Rust;pottery;sign language;French;chess".split(";")
TIMES_OF_DAY = "early morning;late morning;afternoon;late evening".split(";")
AGENTS = ("assistant", "support-bot", "travel-planner", "health-coach", "coding-helper")

# Stored first for every user: the facts an assistant would learn about someone early on.
PROFILE_TEMPLATES = (
    ("fact", "profile", "Lives in {city}."),
    ("fact", "profile", "My name is {name} and I live in {city}."),
    ("fact", "work", "Works as a {job} at {workplace}."),
    ("fact", "health", "Is allergic to {allergen}."),
    ("fact", "family", "Has a {pet} named {pet_name}."),
    ("fact", "profile", "Speaks {language} and {language2}."),
    ("fact", "profile", "Birthday is on {month} {day}."),
    ("preference", "food", "Follows a {diet} diet."),
    ("preference", "work", "Favourite programming language is {programming}."),
    ("fact", "profile", "Timezone is {timezone}."),
    ("fact", "family", "{relative_cap} {relative_name} lives in {city2}."),
)

TEMPLATES = (
    ("preference", "schedule", "Prefers {time_of_day} meetings over {time_of_day2} ones."),
    ("preference", "music", "Likes {genre}, especially when working late."),
    ("preference", "hobby", "Enjoys {hobby} on weekends."),
    ("preference", "food", "Dislikes {food} and {food2}."),
    ("preference", "food", "Loves {food} from the place near the office."),
    ("preference", "communication", "Prefers {channel} over {channel2} for updates."),
    ("preference", "communication", "Wants answers in a {style} style."),
    ("preference", "food", "Favourite cuisine is {cuisine}."),
    ("preference", "food", "Drinks {drink} every morning."),
    ("preference", "travel", "Prefers window seats on flights longer than {hours} hours."),
    ("preference", "travel", "Likes staying in small hotels when visiting {city}."),
    ("episode", "travel", "Booked a trip to {city} for {month} {day}."),
    ("episode", "calendar", "Had a {event} on {weekday} the {nth}."),
    ("episode", "support", "Asked about {topic} on {weekday}."),
    ("episode", "support", "Asked for help with {topic} in {month}."),
    ("episode", "reading", "Finished a book about {topic} in {month}."),
    ("episode", "sport", "Ran a {distance} km race in {city} in {month}."),
    ("episode", "support", "Reported a bug in the {area} page on {weekday}."),
    ("episode", "support", "Complained that the {area} was slow after the {month} release."),
    ("episode", "billing", "Cancelled the {subscription} subscription in {month} {year}."),
    ("episode", "life", "Moved from {city} to {city2} in {year}."),
    ("episode", "learning", "Started learning {skill} in {month} {year}."),
    ("episode", "family", "Visited {relative} {relative_name} in {city} last {weekday}."),
    ("episode", "calendar", "Rescheduled the {event} to {weekday} at {hour} o'clock."),
    ("episode", "health", "Mentioned feeling tired after {hobby} on {weekday}."),
    ("procedure", "work", "To deploy, run the {tool} pipeline and then tell {team}."),
    ("procedure", "work", "Always copy {team} on {doc_kind} emails."),
    ("procedure", "finance", "Expense reports go to {team} before the {nth} of the month."),
    ("procedure", "support", "Resets passwords through the {area} settings page."),
    ("procedure", "work", "Sends the {doc_kind} to {relative_name} for review before {weekday}."),
    ("procedure", "calendar", "Blocks {weekday} mornings for focus time."),
    ("fact", "family", "Has {number} children and a {pet}."),
    ("fact", "life", "Owns a {car} and commutes {distance} km each way."),
    ("fact", "education", "Studied {subject} in {city}."),
    ("fact", "sport", "Is training for a marathon in {city} in {month}."),
    ("fact", "work", "Works remotely on {weekday}s."),
    ("fact", "work", "Manages a team of {number} people in {city}."),
    ("fact", "work", "Uses {device} for work and a phone for {channel}."),
    ("fact", "health", "Has been {diet} since {year}."),
    ("fact", "work", "Is responsible for {topic} this quarter."),
    ("fact", "family", "{relative_cap} {relative_name} works as a {job}."),
)

# Questions an agent would ask of its memory; their words overlap the templates above, as real ones would.
QUERIES = (
    "where does the user live",
    "food allergies",
    "what is the name of my dog",
    "pet name",
    "preferred meeting time",
    "upcoming trip booked",
    "favourite programming language",
    "coffee or tea in the morning",
    "how do we deploy the service",
    "expense report deadline",
    "which languages does the user speak",
    "when is the birthday",
    "marathon training",
    "what music does the user like",
    "vegetarian or vegan diet",
    "bug report checkout page slow",
    "cancelled subscription",
    "how many children",
    "what car do they drive",
    "learning Japanese",
    "remote work days",
    "favourite cuisine",
    "weekend hobbies",
    "how should answers be formatted",
    "best way to send updates",
    "job and employer",
    "moved to a new city",
    "doctor appointment next week",
    "password reset",
    "who reviews the contract",
    "window seat on long flights",
    "team size and manager",
    "what did the user study",
    "tax returns question",
    "sister lives in",
    "focus time in the morning",
    "dislikes spicy food",
    "laptop used for work",
    "time zone",
    "kitchen renovation",
)

_FIELD = re.compile(r"{(\w+)}")


@dataclass(frozen=True)
class MemoryDraft:
    user_id: str
    content: str
    memory_type: str
    tag: str
    agent_id: str
    session_id: str
    channel: str
    importance: float
    confidence: float

    def bulk_item(self) -> dict:
        """The draft as one item of `POST .../memories/bulk`."""
        return {
            "user_id": self.user_id,
            "content": self.content,
            "memory_type": self.memory_type,
            "agent_id": self.agent_id,
            "session_id": self.session_id,
            "metadata": {"channel": self.channel, "lang": "en"},
            "tags": [self.tag],
            "importance": self.importance,
            "confidence": self.confidence,
            "source": "import",
        }


class Corpus:
    def __init__(self, seed: int):
        self.seed = seed

    def user_counts(self, n: int, users: int) -> list[int]:
        """Memories per user, skewed (a few heavy users, many light ones) and summing to n."""
        rng = random.Random(f"{self.seed}:counts")
        weights = [rng.lognormvariate(0.0, 0.6) for _ in range(users)]
        total = sum(weights)
        counts = [max(1, int(n * weight / total)) for weight in weights]
        # Settle rounding so the counts add up to exactly n.
        difference = n - sum(counts)
        order = sorted(range(users), key=lambda index: -weights[index])
        step = 0
        while difference != 0:
            index = order[step % users]
            if difference > 0:
                counts[index] += 1
                difference -= 1
            elif counts[index] > 1:
                counts[index] -= 1
                difference += 1
            step += 1
        return counts

    def memories_for_user(self, user_index: int, count: int, *, prefix: str = "user") -> list[MemoryDraft]:
        """`count` memories of one user, distinct after normalisation (the store deduplicates per user).

        Users of the seeded store get their profile facts first; `prefix` names another population
        (the ingest benchmark writes to fresh users) and draws only from the general templates.
        """
        rng = random.Random(f"{self.seed}:{prefix}:{user_index}")
        user_id = f"{prefix}-{user_index:06d}"
        profile = _profile(rng)
        seen: set[str] = set()
        drafts: list[MemoryDraft] = []
        pending_profile = list(PROFILE_TEMPLATES) if prefix == "user" else []
        attempts = 0
        while len(drafts) < count:
            attempts += 1
            if pending_profile:
                memory_type, tag, template = pending_profile.pop(0)
                content = _fill(template, rng, profile, profile_fields=PROFILE_FIELDS | {"city", "relative"})
            else:
                memory_type, tag, template = rng.choice(TEMPLATES)
                content = _fill(template, rng, profile, profile_fields=SHARED_PROFILE_FIELDS)
            if attempts > count * 20:  # keeps the loop finite for absurd per-user counts
                content = f"{content[:-1]} (note {attempts})."
            key = content.casefold().rstrip(".!;, ")
            if key in seen:
                continue
            seen.add(key)
            drafts.append(
                MemoryDraft(
                    user_id=user_id,
                    content=content,
                    memory_type=memory_type,
                    tag=tag,
                    agent_id=rng.choice(AGENTS),
                    session_id=f"{user_id}-s{rng.randint(1, 40):03d}" if memory_type == "episode" else "",
                    channel=rng.choice(("chat", "chat", "chat", "email", "voice")),
                    importance=round(rng.uniform(0.2, 0.95), 2),
                    confidence=round(rng.uniform(0.6, 1.0), 2),
                )
            )
        return drafts


# Profile fields that general memories reuse, so a user's pet or diet stays the same everywhere.
SHARED_PROFILE_FIELDS = frozenset({"pet", "pet_name", "diet", "allergen"})
PROFILE_FIELDS = frozenset(
    {"name", "job", "workplace", "allergen", "pet", "pet_name", "language", "diet", "programming", "timezone"}
)


def _profile(rng: random.Random) -> dict:
    return {
        "name": rng.choice(FIRST_NAMES),
        "city": rng.choice(CITIES),
        "job": rng.choice(JOBS),
        "workplace": rng.choice(WORKPLACES),
        "allergen": rng.choice(ALLERGENS),
        "pet": rng.choice(PETS),
        "pet_name": rng.choice(PET_NAMES),
        "language": rng.choice(LANGUAGES),
        "diet": rng.choice(DIETS),
        "programming": rng.choice(PROGRAMMING),
        "timezone": rng.choice(TIMEZONES),
        "relative": rng.choice(RELATIVES),
    }


def _fill(template: str, rng: random.Random, profile: dict, *, profile_fields: frozenset) -> str:
    def value(match: re.Match) -> str:
        name = match.group(1)
        if name == "relative_cap":
            relative = profile["relative"] if "relative" in profile_fields else rng.choice(RELATIVES)
            return "My " + relative
        if name in profile_fields:
            return profile[name]
        if name == "city" and rng.random() < 0.3:
            return profile["city"]  # people mention their own city more than others
        return _random_value(name, rng)

    return _FIELD.sub(value, template)


def _random_value(name: str, rng: random.Random) -> str:
    choices = {
        "name": FIRST_NAMES,
        "relative_name": FIRST_NAMES,
        "city": CITIES,
        "city2": CITIES,
        "job": JOBS,
        "workplace": WORKPLACES,
        "allergen": ALLERGENS,
        "pet": PETS,
        "pet_name": PET_NAMES,
        "language": LANGUAGES,
        "language2": LANGUAGES,
        "diet": DIETS,
        "programming": PROGRAMMING,
        "timezone": TIMEZONES,
        "month": MONTHS,
        "weekday": WEEKDAYS,
        "relative": RELATIVES,
        "hobby": HOBBIES,
        "food": FOODS,
        "food2": FOODS,
        "cuisine": CUISINES,
        "drink": DRINKS,
        "genre": GENRES,
        "channel": CHANNELS,
        "channel2": CHANNELS,
        "style": STYLES,
        "topic": TOPICS,
        "area": PRODUCT_AREAS,
        "event": EVENTS,
        "subscription": SUBSCRIPTIONS,
        "tool": TOOLS,
        "team": TEAMS,
        "doc_kind": DOC_KINDS,
        "device": DEVICES,
        "car": CARS,
        "subject": SUBJECTS,
        "skill": SKILLS,
        "time_of_day": TIMES_OF_DAY,
        "time_of_day2": TIMES_OF_DAY,
    }
    if name in choices:
        return rng.choice(choices[name])
    if name == "day":
        return str(rng.randint(1, 28))
    if name == "nth":
        day = rng.randint(1, 28)
        suffix = "th" if 11 <= day <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
        return f"{day}{suffix}"
    if name == "year":
        return str(rng.randint(2008, 2025))
    if name == "hour":
        return str(rng.randint(8, 18))
    if name == "hours":
        return str(rng.randint(3, 12))
    if name == "distance":
        return str(rng.choice((5, 10, 12, 15, 21, 25, 30, 42)))
    if name == "number":
        return str(rng.randint(2, 12))
    raise KeyError(f"no words for template field {name!r}")
