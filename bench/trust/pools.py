"""Names, places and things the generated notes are made of.

Pools are plain tuples, drawn from with a seeded ``random.Random``; a
workspace's cast is drawn from :data:`FIRST_NAMES` and the names it did not
draw are the absent people its questions may ask about. Values that a
German or Portuguese note writes differently carry their three forms
(:class:`Word`).
"""

from __future__ import annotations

from datetime import date
from typing import NamedTuple


class Word(NamedTuple):
    """A value as English, German and Portuguese notes write it."""

    en: str
    de: str
    pt: str

    def text(self, lang: str) -> str:
        return getattr(self, lang)


FIRST_NAMES = tuple(
    "Ines Tomas Priya Jonas Marta Kwame Aiko Bruno Chiara Dmitri Elif Farid Greta Hamza Ilse Joaquim Keiko Lars Mei "
    "Nadia Oskar Paulo Quentin Rosa Sanjay Tereza Uma Viktor Wanjiru Xavier Yara Zoltan Amara Bastian Carmen Dario "
    "Esther Fenna Gustavo Hana Ivo Jasmin Kofi Leonie Matteo Noor Olga Pedro Rui Sofia Thabo Ulla Valentina Wim "
    "Yusuf Zara Anouk Bilal Clara Diego Emeka Frida Gael Helga Imani Jorge Kasia Lucas Marisol Nils Ophelia Rafael "
    "Saoirse Tariq Ursula Vera Wendell Ximena Yosef Zeynep Agnieszka Benedikt Catalina Desmond Elena Florin Giulia "
    "Hugo Ingrid Jules Kenji Lotte Magnus Nkechi Orla Pilar Radek Signe Teodor Ugo Vivek Wilhelmina Yannick Zofia "
    "Aurelio Brigitte Cosmin Dagny Evander Fatima Gunnar Hyun Isolde Jarrah Kiri Ludmila Mattias Nuno Odile "
    "Pernille".split()
)

SURNAMES = tuple(
    "Okafor Haddad Lindqvist Moreau Tanaka Ferreira Novak Schulz Mensah Rossi Kowalski Nguyen Oyelaran Petrov "
    "Quintero Richter Sato Teixeira Varga Whitfield Abiodun Brandt Castillo Dubois Eriksen Fonseca Gallo Hartmann "
    "Ivanova Jansen Keller Lopes Maalouf Nakamura Ortega Pereira Ribeiro Silva Takahashi Urban".split()
)

CITIES = tuple(
    "Lisbon Porto Lyon Edinburgh Leipzig Hamburg Utrecht Ghent Bologna Krakow Valencia Bergen Tallinn Coimbra "
    "Nantes Graz Aarhus Cork Bristol Seville Toulouse Gdansk Brno Malmo Turin Bilbao Dresden Rotterdam Galway Braga".split()
)

COMPANIES = (
    "Northwind Freight",
    "Keyway Lettings",
    "Halden Bank",
    "Brightloop",
    "Corvid Analytics",
    "Tessellate",
    "Marlow & Finch",
    "Bluefin Logistics",
    "Quarry Labs",
    "Oakridge Health",
    "Pellucid",
    "Vantage Rail",
    "Ironbark Studio",
    "Solent Water",
    "Copperline",
    "Greyhaven Insurance",
    "Lumen Grid",
    "Tidewater Books",
)

ROLES_AT_WORK = (
    "data engineer",
    "product manager",
    "nurse",
    "architect",
    "teacher",
    "UX researcher",
    "accountant",
    "sound engineer",
    "paramedic",
    "translator",
    "site reliability engineer",
    "pharmacist",
    "lawyer",
    "chef",
)

PROJECTS = tuple(
    "Gullwing Kestrel Tern Halyard Bramble Lodestar Pinnacle Quillon Ripcord Saltmarsh Thimble Umbra Verdigris "
    "Wicket Yardarm Zephyr Anvil Beacon Cobalt Dunlin Ember Foxglove Gannet Heron".split()
)

DATABASES = ("PostgreSQL 16", "MySQL 8", "SQLite", "DynamoDB", "MongoDB", "CockroachDB", "ClickHouse", "Redis", "Cassandra", "MariaDB")
HOSTING = (
    "fly.io",
    "Hetzner",
    "AWS eu-west-1",
    "Google Cloud Run",
    "a Raspberry Pi in the office",
    "Render",
    "Azure West Europe",
    "DigitalOcean",
)
LANGUAGES = ("Go", "Rust", "Kotlin", "TypeScript", "Python 3.12", "Elixir", "Java 21", "C#")
VENDORS = ("Spireline", "DataHarbor", "Meridian Maps", "Pulsewave", "Calyx Mail", "Stratus Logs", "Vexel SMS", "Orbit Pay")
HOSTNAMES = ("pg-staging-2.internal", "db7.lan", "cache-eu-1.internal", "mq-prod-3", "build-04.ci", "ledger-db.prod", "atlas.home")

DRINKS = (
    Word("black coffee", "schwarzen Kaffee", "café sem açúcar"),
    Word("oat flat white", "Hafer-Flat-White", "flat white de aveia"),
    Word("green tea", "grünen Tee", "chá verde"),
    Word("rooibos", "Rooibos", "rooibos"),
    Word("sparkling water", "Sprudelwasser", "água com gás"),
    Word("chai latte", "Chai Latte", "chai latte"),
    Word("double espresso", "doppelten Espresso", "espresso duplo"),
    Word("hot chocolate", "heiße Schokolade", "chocolate quente"),
    Word("mint tea", "Pfefferminztee", "chá de hortelã"),
    Word("cortado", "Cortado", "pingado"),
)

ALLERGIES = (
    Word("peanuts", "Erdnüsse", "amendoim"),
    Word("shellfish", "Meeresfrüchte", "marisco"),
    Word("penicillin", "Penicillin", "penicilina"),
    Word("cats", "Katzen", "gatos"),
    Word("pollen", "Pollen", "pólen"),
    Word("gluten", "Gluten", "glúten"),
    Word("sesame", "Sesam", "sésamo"),
    Word("wasp stings", "Wespenstiche", "picadas de vespa"),
)

CUISINES = (
    Word("Ethiopian food", "äthiopisches Essen", "comida etíope"),
    Word("ramen", "Ramen", "ramen"),
    Word("Georgian food", "georgisches Essen", "comida georgiana"),
    Word("dim sum", "Dim Sum", "dim sum"),
    Word("Lebanese mezze", "libanesische Mezze", "mezze libanês"),
    Word("Neapolitan pizza", "neapolitanische Pizza", "pizza napolitana"),
    Word("Sichuan hotpot", "Sichuan-Hotpot", "hotpot de Sichuan"),
    Word("Peruvian ceviche", "peruanische Ceviche", "ceviche peruano"),
)

HOBBIES = (
    Word("bouldering", "Bouldern", "escalada"),
    Word("rowing", "Rudern", "remo"),
    Word("pottery", "Töpfern", "cerâmica"),
    Word("choir", "Chor", "coro"),
    Word("chess", "Schach", "xadrez"),
    Word("salsa dancing", "Salsa tanzen", "dança salsa"),
    Word("birdwatching", "Vogelbeobachtung", "observação de aves"),
    Word("trail running", "Trailrunning", "trail running"),
    Word("woodworking", "Holzarbeiten", "marcenaria"),
    Word("water polo", "Wasserball", "polo aquático"),
)

GIFTS = (
    "a fountain pen",
    "the new Murakami novel",
    "a cast-iron skillet",
    "noise-cancelling headphones",
    "a bonsai starter kit",
    "a Lego botanical set",
    "a film camera",
    "a linen apron",
    "hiking poles",
    "a vinyl of Kind of Blue",
    "a sourdough starter",
    "a chess clock",
)

PETS = tuple("Biscuit Pixel Mango Juniper Waffles Otto Pepper Nimbus Tofu Ziggy Clementine Bolt".split())
PET_KINDS = (
    Word("dog", "Hund", "cão"),
    Word("cat", "Katze", "gato"),
    Word("rabbit", "Kaninchen", "coelho"),
    Word("tortoise", "Schildkröte", "tartaruga"),
)
SPORTS_DAYS = (
    Word("Tuesday evenings", "dienstagabends", "às terças à noite"),
    Word("Saturday mornings", "samstagvormittags", "aos sábados de manhã"),
    Word("Thursday lunchtimes", "donnerstags mittags", "às quintas ao almoço"),
    Word("Sunday afternoons", "sonntagnachmittags", "aos domingos à tarde"),
)

BOOKS = (
    "The Overstory",
    "Piranesi",
    "Project Hail Mary",
    "Middlemarch",
    "The Dispossessed",
    "Klara and the Sun",
    "Pachinko",
    "The Left Hand of Darkness",
    "Stoner",
    "Braiding Sweetgrass",
    "The Name of the Rose",
)
SHOWS = ("Severance", "Slow Horses", "The Bear", "Dark", "Borgen", "Shogun", "Deutschland 83")
STREETS = ("Elm Street", "Rua da Rosa", "Canal Road", "Lindenallee", "Harbour Lane", "Mill Row", "Rua do Carmo")
CARS = ("the Golf", "the old Corsa", "the Skoda", "the Zoe", "the van")
APPLIANCES = ("dishwasher", "washing machine", "boiler", "fridge", "oven", "tumble dryer")
FAULTS = ("leaking", "making a grinding noise", "not heating up", "tripping the fuse", "showing error E24")

#: Incident causes and symptoms of the work logs.
SYMPTOMS = (
    "checkout latency spiked to 4 s",
    "the nightly export never finished",
    "login returned 502s for EU users",
    "duplicate invoices were sent",
    "the queue backed up to 80k messages",
    "search returned stale prices",
    "webhooks were dropped for 40 minutes",
    "the mobile app crashed on launch",
)
CAUSES = (
    "an expired TLS certificate",
    "a missing index on orders.customer_id",
    "a connection pool capped at 10",
    "a bad feature flag rollout",
    "clock skew on one worker",
    "a retry storm from the billing client",
    "a full disk on the log volume",
    "a race in the cache invalidation",
)
FIXES = (
    "the retry backoff",
    "the flaky CSV parser",
    "the timezone bug in reports",
    "the memory leak in the uploader",
    "pagination on the audit log",
    "the off-by-one in invoice numbering",
    "the broken password reset link",
)

MONTHS = {
    "en": ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"),
    "de": ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"),
    "pt": ("janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro", "novembro", "dezembro"),
}


def day_month(d: date, lang: str = "en") -> str:
    """``14 March`` / ``14. März`` / ``14 de março``."""
    month = MONTHS[lang][d.month - 1]
    if lang == "de":
        return f"{d.day}. {month}"
    if lang == "pt":
        return f"{d.day} de {month}"
    return f"{d.day} {month}"
