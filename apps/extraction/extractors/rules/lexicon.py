"""Word lists the rules rely on. Kept small and explicit: a missing word costs a fact, a wrong one invents it."""

from apps.extraction.extractors.rules.subjects import ADDRESS, EMAIL, PHONE, identifier_subject


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Head nouns that make "I'm a/an X" a job ("I'm a senior software engineer"), not a state ("I'm a bit tired").
JOB_HEADS = _words(
    "accountant actor actress administrator advisor adviser agent analyst animator architect artist assistant "
    "associate attorney auditor baker banker barber barista bartender biologist bookkeeper builder butcher "
    "buyer carpenter cashier ceo cfo chef chemist cio clerk coach consultant contractor coordinator coo "
    "counselor counsellor courier cto dancer dentist designer developer dietitian director doctor driver "
    "economist editor educator electrician engineer entrepreneur executive farmer firefighter founder co-founder "
    "freelancer gardener geologist hairdresser head historian instructor intern investor janitor journalist "
    "judge lawyer lead lecturer librarian lifeguard machinist manager marketer mathematician mechanic midwife "
    "musician nanny nurse officer operator optometrist owner painter paralegal paramedic partner pharmacist "
    "photographer physician physicist physiotherapist pilot plumber police policeman policewoman politician "
    "president principal producer professor programmer psychiatrist psychologist publisher realtor receptionist "
    "recruiter representative researcher retiree salesman saleswoman salesperson scientist secretary "
    "servant specialist statistician student supervisor surgeon surveyor teacher technician therapist trader "
    "trainer translator tutor undergrad undergraduate veterinarian vet vp waiter waitress welder writer "
    "postdoc phd sre devops admin sysadmin pm tester strategist trainer mentor caseworker planner stylist advocate"
)
STUDENT_HEADS = _words("student undergrad undergraduate postdoc phd pupil")
# "I work in marketing": fields of work (a capitalised word after "work in" is more often a place).
INDUSTRIES = _words(
    "marketing sales finance it hr tech technology healthcare education retail hospitality construction insurance "
    "banking consulting law engineering logistics government media publishing advertising accounting research "
    "manufacturing software security cybersecurity pharma biotech fintech ecommerce e-commerce journalism design "
    "operations support recruiting recruitment nonprofit real-estate gaming aviation academia"
)
# "I'm retired" / "I'm self-employed": job states without an article.
JOB_STATES = _words("retired self-employed unemployed freelance")

NATIONALITIES = _words(
    "american british english scottish welsh irish canadian australian french german italian spanish "
    "portuguese dutch belgian swiss austrian swedish norwegian danish finnish polish czech hungarian greek "
    "turkish russian ukrainian romanian bulgarian serbian croatian indian pakistani bangladeshi chinese "
    "japanese korean vietnamese thai filipino indonesian malaysian singaporean mexican brazilian argentinian "
    "argentine chilean colombian peruvian venezuelan cuban nigerian kenyan ghanaian egyptian moroccan "
    "ethiopian israeli iranian iraqi lebanese saudi emirati african european asian latino latina"
)
LANGUAGES = _words(
    "english french german spanish italian portuguese dutch swedish norwegian danish finnish polish czech "
    "hungarian greek turkish russian ukrainian romanian arabic hebrew persian farsi hindi urdu bengali punjabi "
    "tamil telugu marathi mandarin cantonese chinese japanese korean vietnamese thai indonesian malay tagalog "
    "swahili catalan basque irish welsh latin esperanto"
)
DIETS = _words("vegetarian vegan pescatarian pescetarian keto kosher halal paleo")
HEALTH_CONDITIONS = {"celiac": "celiac", "coeliac": "celiac", "diabetic": "diabetic",
                     "lactose intolerant": "lactose intolerant", "lactose-intolerant": "lactose intolerant",
                     "gluten intolerant": "gluten intolerant", "gluten-free": "gluten-free"}

# "I'm <Word>" is a name only when <Word> is none of these (and is capitalised).
NOT_NAMES = _words(
    "fine good great ok okay sorry back here there ready done sure not so very just still happy sad tired busy "
    "confused interested looking trying going new good glad afraid aware excited sick well alright home hungry "
    "available curious fine finished free late early lost married single stuck unsure worried the a an in on at "
    "from with also really actually currently now always never having getting calling writing asking wondering "
    "thinking working living based moving travelling traveling flying leaving still all nervous frustrated "
    "annoyed angry upset calm cool pretty quite retired vegan vegetarian allergic american english jewish "
    "christian muslim catholic hindu buddhist atheist gay straight trans bi male female a.i ai human "
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july "
    "august september october november december tomorrow today tonight later soon anytime asap whenever "
    "ridiculous terrible awful amazing annoying frustrating urgent important weird strange crazy insane "
    "unacceptable broken wrong correct right perfect awesome helpful useless impossible easy hard stupid "
    "interesting exciting embarrassing team support services service customer customers department desk staff "
    "everyone accounts payable receivable billing sales finance admin administration reception office operations "
    "management procurement purchasing marketing helpdesk"
) | NATIONALITIES
NAME_BREAKS = _words(
    "and but from by btw though however here speaking please thanks thank so i i'm im my who which that "
    "the a an of in at to for with is was as, if when or also too now currently"
)

# Nouns after "forget my ..." / "delete the ..." and the subject they retract. A qualifier before the noun ("my
# mobile number", "my delivery address") is read apart from it (commands._FORGET_SUBJECT), so it is not listed here.
_CARD = identifier_subject("card")
SUBJECT_NOUNS = {
    "email": EMAIL, "email address": EMAIL, "e-mail": EMAIL, "e-mail address": EMAIL,
    "phone": PHONE, "phone number": PHONE, "number": PHONE, "mobile": PHONE, "cell": PHONE, "cellphone": PHONE,
    "telephone": PHONE, "telephone number": PHONE, "contact number": PHONE,
    "address": ADDRESS, "location": "location", "city": "location",
    "name": "name", "nickname": "preferred_name", "preferred name": "preferred_name",
    "job": "job_title", "job title": "job_title", "title": "job_title", "role": "job_title",
    "position": "job_title", "occupation": "job_title", "profession": "job_title",
    "employer": "employer", "company": "employer", "workplace": "employer",
    "birthday": "birthday", "date of birth": "birthday", "dob": "birthday", "age": "age",
    "timezone": "timezone", "time zone": "timezone", "pronouns": "pronouns", "diet": "diet",
    "card": _CARD, "card details": _CARD, "card number": _CARD, "payment card": _CARD, "credit card": _CARD,
    "debit card": _CARD,
    "plan": "plan", "tier": "plan", "subscription plan": "plan",
    "email addresses": EMAIL, "emails": EMAIL, "phone numbers": PHONE, "numbers": PHONE,
    "addresses": ADDRESS, "postcode": ADDRESS, "zip code": ADDRESS,
    "allergy": "allergy", "allergies": "allergy",
    "landline": f"{PHONE}:home", "landline number": f"{PHONE}:home", "home phone": f"{PHONE}:home",
    "medical condition": "health", "health condition": "health", "condition": "health", "medical history": "health",
    "health information": "health", "health details": "health",
    # a webmail provider's name is an email address: "that old Hotmail address"
    "hotmail": EMAIL, "hotmail address": EMAIL, "gmail": EMAIL, "gmail address": EMAIL, "outlook address": EMAIL,
    "yahoo address": EMAIL, "icloud address": EMAIL, "proton address": EMAIL,
}
SUBJECT_LABELS = {
    EMAIL: "email address", PHONE: "phone number", "location": "location", "name": "name",
    "preferred_name": "preferred name", "job_title": "job title", "employer": "employer", "birthday": "birthday",
    "age": "age", "timezone": "time zone", "pronouns": "pronouns", "diet": "diet", ADDRESS: "address",
    _CARD: "card details", "plan": "plan", "allergy": "allergies", f"{PHONE}:home": "home phone number",
    "health": "health conditions",
}

# "I have a dentist appointment tomorrow": events that make "I have ..." a plan.
EVENT_NOUNS = _words(
    "appointment meeting interview flight trip exam test surgery operation call wedding party conference "
    "deadline vacation holiday class lesson concert game match presentation checkup check-up procedure "
    "reservation booking date session hearing visit delivery shift training course seminar workshop "
    "webinar demo launch move birthday anniversary"
)
# "I'm <-ing> ..." forms that describe the conversation, not a plan.
NOT_PLANS = _words(
    "looking trying wondering thinking having writing asking calling contacting reaching getting hoping "
    "waiting struggling confused talking messaging chatting using"
)

# Objects after "I like/love/hate" that point back into the conversation ("I love it", "I like your idea").
DEICTIC_OBJECTS = _words(
    "it that this these those them him her you your yours what how why where which whether something "
    "anything everything nothing one so too much lot"
)

# Head nouns of a preference whose values exclude each other: "the compact view" / "the detailed view" are two values
# of one choice (preference:view), while "I like tea" / "I like coffee" are two likes.
PREFERENCE_DIMENSIONS = _words(
    "view mode theme layout format font language channel seat time slot day interface version display style "
    "scheme delivery shipping option method setting dashboard editor template currency unit size cabin class "
    "room bed deck meal appointment statement invoice bill billing copy receipt notification alert newsletter "
    "reminder call contact communication doctor clinic branch store location airport airline carrier courier "
    "route payment pickup collection packaging"
)
# Head nouns of an account setting that holds one value at a time: "my home airport is Manchester", "our default
# courier is DPD"; a new value of it replaces the old (setting:<qualifier> <head>).
SETTING_HEADS = _words(
    "airport airline carrier courier branch store location currency timezone seat cabin class tariff budget limit "
    "allowance excess premium deposit service option method theme view mode layout format dashboard template unit "
    "size route depot team"
)
# Ways to reach someone: a preference among them is the contact channel ("I prefer email").
CONTACT_CHANNELS = _words(
    "email e-mail emails mail post letter letters phone call calls telephone text texts sms message messages "
    "whatsapp chat signal telegram messenger video zoom teams voicemail in-person person"
)

# Everyday words that rule out a lowercase "i'm <words>" being a name ("i'm locked out of my account").
COMMON_WORDS = _words(
    "out up down off about over under away around back through into onto again too more less much many some any "
    "no yes not one two three locked stuck unable afraid sure trying having still just only even also really very "
    "so such this that these those it its my your our their his her what who how why when where which new old "
    "big small good bad best worst last first next same other another every each all both either neither few "
    "several most least own enough quite rather almost nearly already soon later never always often sometimes "
    "usually ok okay yeah yep nope please thanks thank sorry hello hi hey bye calling writing contacting emailing "
    "messaging waiting there here in on at to for with by from of as if or and but because since until while "
    "customer client member user owner admin manager guest subscriber tenant patient passenger traveller traveler "
    "account problem issue question help support agent bot human person someone somebody nobody everyone"
)

# What kind of device a word names: one device of each kind is current ("device:phone").
DEVICE_KINDS = {
    **dict.fromkeys("phone smartphone iphone android pixel galaxy handset".split(), "phone"),
    **dict.fromkeys("laptop macbook notebook chromebook thinkpad ultrabook".split(), "laptop"),
    **dict.fromkeys("tablet ipad kindle e-reader".split(), "tablet"),
    **dict.fromkeys("pc desktop computer mac imac windows linux macos".split(), "computer"),
    **dict.fromkeys("router modem hub mesh".split(), "router"),
    **dict.fromkeys("tv television set-top".split(), "tv"),
    **dict.fromkeys("watch smartwatch".split(), "watch"),
    **dict.fromkeys("printer scanner".split(), "printer"),
    **dict.fromkeys("console playstation xbox".split(), "console"),
    **dict.fromkeys("thermostat".split(), "thermostat"),
    **dict.fromkeys("boiler heat-pump".split(), "boiler"),
    **dict.fromkeys("wheelchair".split(), "wheelchair"),
    **dict.fromkeys("car van vehicle motorbike motorcycle scooter truck suv campervan motorhome".split(), "vehicle"),
}

# Makes of car, van and motorbike: "a Peugeot 3008", "honda civic, reg KV68 PNZ" is a vehicle without the word "car".
VEHICLE_MAKES = _words(
    "abarth acura alfa aston audi bentley bmw buick byd cadillac chevrolet chevy chrysler citroen citroën cupra dacia "
    "daewoo daihatsu dodge ds ferrari fiat ford genesis gmc holden honda hyundai infiniti isuzu jaguar jeep kia lada "
    "lamborghini lancia land-rover landrover lexus lincoln lotus maserati mazda mclaren mercedes mercedes-benz mg mini "
    "mitsubishi nissan opel peugeot polestar porsche proton ram renault rivian rover saab seat skoda škoda smart "
    "ssangyong subaru suzuki tata tesla toyota vauxhall volkswagen vw volvo yamaha ducati triumph harley kawasaki "
    "piaggio vespa"
)

# --- Support: the user's contacts, contact channels, addresses (support.py and the modules it uses) ------------

# "my assistant Tom books my travel": relation word -> (relation, whether the user has one at a time). Someone the
# user has one of (an assistant, a spouse) keeps one subject, so a new one replaces the old; colleagues, children
# and friends are told apart by name.
CONTACT_RELATIONS = {
    "wife": ("wife", True), "husband": ("husband", True), "partner": ("partner", True),
    "spouse": ("spouse", True), "fiance": ("fiance", True), "fiancé": ("fiance", True), "fiancee": ("fiancee", True),
    "fiancée": ("fiancee", True), "girlfriend": ("girlfriend", True), "boyfriend": ("boyfriend", True),
    "assistant": ("assistant", True), "pa": ("assistant", True), "secretary": ("secretary", True),
    "accountant": ("accountant", True), "bookkeeper": ("bookkeeper", True), "lawyer": ("lawyer", True),
    "solicitor": ("solicitor", True), "attorney": ("attorney", True), "manager": ("manager", True),
    "boss": ("boss", True), "carer": ("carer", True), "caregiver": ("caregiver", True),
    "landlord": ("landlord", True), "landlady": ("landlord", True), "agent": ("agent", True),
    "advisor": ("adviser", True), "adviser": ("adviser", True), "guardian": ("guardian", True),
    "mother": ("mother", True), "mum": ("mother", True), "mom": ("mother", True), "father": ("father", True),
    "dad": ("father", True), "colleague": ("colleague", False), "coworker": ("colleague", False),
    "co-worker": ("colleague", False), "son": ("son", False), "daughter": ("daughter", False),
    "brother": ("brother", False), "sister": ("sister", False), "friend": ("friend", False),
    "neighbour": ("neighbour", False), "neighbor": ("neighbour", False), "flatmate": ("flatmate", False),
    "roommate": ("flatmate", False), "housemate": ("flatmate", False), "child": ("child", False),
    "kid": ("child", False), "parent": ("parent", False), "tenant": ("tenant", False),
    "employee": ("employee", False), "cousin": ("cousin", False), "aunt": ("aunt", False),
    "uncle": ("uncle", False), "nephew": ("nephew", False), "niece": ("niece", False),
    "grandmother": ("grandmother", False), "grandfather": ("grandfather", False), "grandma": ("grandmother", False),
    "grandpa": ("grandfather", False), "teammate": ("colleague", False),
    "grandson": ("grandson", False), "granddaughter": ("granddaughter", False), "grandchild": ("grandchild", False),
    "stepson": ("stepson", False), "stepdaughter": ("stepdaughter", False), "stepmother": ("stepmother", True),
    "stepfather": ("stepfather", True), "mother-in-law": ("mother-in-law", True),
    "father-in-law": ("father-in-law", True), "son-in-law": ("son-in-law", False),
    "daughter-in-law": ("daughter-in-law", False), "sister-in-law": ("sister-in-law", False),
    "brother-in-law": ("brother-in-law", False), "godmother": ("godmother", True), "godfather": ("godfather", True),
    # people who look after the user's home or children
    "childminder": ("childminder", True), "nanny": ("nanny", True), "babysitter": ("babysitter", False),
    "au pair": ("au pair", True), "cleaner": ("cleaner", True), "housekeeper": ("housekeeper", True),
    "deputy": ("deputy", True),
    "ex-husband": ("ex-husband", True), "ex-wife": ("ex-wife", True), "ex-partner": ("ex-partner", True),
    "ex": ("ex-partner", True),
    # the user's animals, named and spoken of like their people ("my dog Max", "Max needs his booster")
    "dog": ("dog", False), "puppy": ("dog", False), "cat": ("cat", False), "kitten": ("cat", False),
    "horse": ("horse", False), "pony": ("horse", False), "rabbit": ("rabbit", False), "parrot": ("parrot", False),
}
# Which third-person pronoun a relation word takes ("my son ... his number is"); others take any.
MALE_RELATIONS = _words("ex-husband husband fiance fiancé boyfriend father dad son brother uncle nephew grandfather grandpa landlord "
                        "grandson stepson stepfather father-in-law son-in-law brother-in-law godfather")
FEMALE_RELATIONS = _words(
    "ex-wife wife fiancee fiancée girlfriend mother mum mom daughter sister aunt niece grandmother grandma landlady "
    "granddaughter stepdaughter stepmother mother-in-law daughter-in-law sister-in-law godmother"
)
# Words that may stand before a relation word: "my personal assistant", "my business partner".
CONTACT_RELATION_MODIFIERS = _words(
    "personal executive virtual office finance financial line account business legal tax care "
    "elder older eldest younger youngest little big new current old former"
)
# Relations whose name the user states as a family fact ("my wife's name is Sara", facts.py), not as a contact.
FAMILY_RELATIONS = _words(
    "wife husband partner spouse fiance fiancee girlfriend boyfriend mother father son daughter brother sister "
    "child parent cousin aunt uncle nephew niece grandmother grandfather"
)

# Street-type words that make a capitalised phrase an address ("4 Harbour Road", "Rue de Rivoli").
STREET_WORDS = _words(
    "road rd street st avenue ave av lane ln drive dr way boulevard blvd place pl square sq court ct close "
    "crescent cres terrace row gardens park hill quay wharf parade mews grove walk highway hwy route rte "
    "rue calle via strasse straße str platz weg avenida rua plaza piazza plein gasse laan straat vej gata "
    "estate industrial building house tower centre center floor suite unit apartment apt flat"
)

