"""Everyday entries around the facts: errands, moods, reviews, small talk.

They mention the same people and projects as the facts (a person of the
cast shows up in many entries, one of which answers) and touch near topics
(the office coffee machine beside a note on what someone drinks, the rent
going up beside the landlord's name) without holding any fact a question
asks for: no birthday, drink, city, employer, allergy or role of anyone.
Fields: ``{p}``/``{q}`` people of the cast, ``{X}`` a project, ``{c}`` a
city, ``{show}``, ``{street}``, ``{n}`` a number, ``{tid}`` a
ticket, ``{h7}`` a short hash, ``{clock}`` a time of day.
"""

from __future__ import annotations

#: Short notes of daily life, as bullets.
TERSE = (
    "Groceries: eggs, spinach, lemons, rice",
    "Groceries: oat milk, bread, tomatoes, coffee beans",
    "Paid the water bill",
    "Paid the council tax",
    "Gym, {n} min, legs",
    "Watched {show} with {p}",
    "Called {p}, nothing new",
    "Walk along {street} with {p}",
    "Laundry and ironing",
    "Booked a table for Friday",
    "Read for an hour before bed",
    "Slept badly, too warm",
    "Rain all day, stayed in",
    "Cleaned the fridge",
    "Took the bike in for a tune-up",
    "Office coffee machine broken again",
    "Rent goes up 3% from next month",
    "Electric toothbrush died, ordered a new one",
    "Printer out of ink",
    "Dentist reminder letter came; ignore, already booked",
    "Birthday collection at work, gave 10 EUR",
    "Moved the plants to the balcony",
    "Long lunch with {p} and {q}",
    "{p} sent photos from the weekend",
    "{p} dropped by with cake",
    "Helped {p} move a sofa",
    "Train delayed {n} minutes again",
    "Bought stamps and envelopes",
    "Renewed the library books",
    "Smoke alarm battery replaced",
    "Fixed the squeaky door",
    "Cancelled the magazine subscription",
    "Board games at {p}'s",
    "Meal prep for the week: lentil soup",
    "{p} says the new flat has a view",
    "Headache all afternoon",
    "Ordered curtains for the bedroom",
    "Backed up the laptop",
    "Went to the market on {street}",
    "Video call with {p} and {q}",
)

#: Sentences of a diary; a paragraph is a few of them.
PROSE = (
    "It rained all afternoon, so I stayed in with a blanket and tea.",
    "{p} called and we talked for an hour about nothing in particular.",
    "Felt tired after work and skipped the gym again.",
    "Walked along {street} after dinner; the light was beautiful.",
    "The neighbours had a party until two in the morning.",
    "Spent the morning tidying the spare room.",
    "{p} and {q} came round for dinner and stayed late.",
    "Work was a blur of meetings today.",
    "I finally finished the puzzle that has been on the table since spring.",
    "The train was packed, I stood the whole way.",
    "Made soup with the last of the vegetables.",
    "{p} seemed a bit down today; I should check in next week.",
    "Watched two episodes of {show} and went to bed too late.",
    "The coffee machine at the office broke again, which put everyone in a mood.",
    "We argued about the dishes, then laughed about arguing about the dishes.",
    "Paid the rent and the phone bill, the boring part of the month.",
    "Cycled to work for the first time in weeks.",
    "There is a new bakery on {street}; the rye bread is excellent.",
    "{p} sent a voice note that was eleven minutes long.",
    "I keep meaning to call the dentist's office and keep forgetting.",
    "Went to bed early with a headache.",
    "The garden needs work before the frost.",
    "Had a long lunch with {p}; mostly we talked about travel.",
    "Cleared out my inbox, down to {n} unread.",
    "Saw a fox in the park on the way home.",
    "Bought flowers for no reason.",
    "The heating clicked on for the first time this season.",
    "Everyone at work is tired before the holidays.",
    "Sorted old photos from {c}.",
)

#: A work log's lines.
WORK = (
    "{X}: reviewed {p}'s PR on the export module",
    "Deployed {X} to staging",
    "{X}: bumped dependencies, tests green",
    "Pairing with {p} on flaky tests in {X}",
    "Wrote the runbook for {X} failover",
    "{X}: {tid} moved to review",
    "{X}: deployed {h7} to production",
    "Code review backlog cleared",
    "Sprint planning, {n} points committed",
    "{X}: profiling the import job, {n} ms per batch",
    "On-call handover to {p}",
    "Updated the {X} dashboards",
    "{X}: rotated the API keys",
    "Interviewed a candidate for the platform team",
    "{X}: cleaned up feature flags",
    "Retro notes shared with {p} and {q}",
    "{X}: CI cache broken again, rebuilt runners",
    "{X}: load test at {n} rps, p95 fine",
    "Reverted {h7} on {X}, broke the nightly build",
    "{X}: docs for the public API",
    "1:1 with {p}, mostly career stuff",
    "Migrated {X} tests to the new fixtures",
    "Wrote the quarterly planning doc",
    "{X}: triaged {n} bugs",
    "{X}: DB migration dry-run on staging",
    "Lunch and learn on observability",
)

#: What meeting notes hold besides their decisions.
MEETING = (
    "Nothing blocking.",
    "{p} will share the slides.",
    "Action: {p} to update the roadmap doc.",
    "Discussed hiring for {X}; no decision yet.",
    "Budget review postponed to next week.",
    "{p} demoed the new onboarding flow.",
    "Action: {q} to follow up with legal.",
    "{X}: on track for the milestone.",
    "{X}: two bugs carried over.",
    "Agreed to keep the meeting to 30 minutes.",
    "{p} out next week, {q} covers.",
    "Customer feedback on {X} mostly positive.",
    "Action: everyone to fill in the survey by Friday.",
    "Questions about the office move, answers next time.",
    "{p} raised the on-call load again.",
    "Reviewed the incident list, nothing new.",
)

#: Small talk in a chat.
CHAT = (
    "haha yes",
    "ok see you at {clock}",
    "running 10 min late, sorry",
    "did you see the match last night?",
    "{q} says hi",
    "can you send me the photos?",
    "omw",
    "lol that is so typical",
    "what time works for you?",
    "sounds good!",
    "I'll check and get back to you",
    "how was your weekend?",
    "ugh, mondays",
    "you free on Saturday?",
    "just got home",
    "that film was way too long",
    "did {q} reply to you?",
    "miss you guys",
    "the train is stuck again",
    "brb",
    "can't wait!",
    "good luck today",
    "thanks, you too",
    "it's freezing here",
    "send me the link?",
    "I'm knackered, early night",
)

DE = (
    "Einkaufen: Brot, Käse, Äpfel",
    "Mit {p} spazieren gewesen",
    "Langer Tag im Büro, müde",
    "Wäsche gewaschen",
    "{p} hat angerufen, alles gut",
    "Fahrrad repariert",
    "Regen den ganzen Tag",
    "Kaffeemaschine im Büro wieder kaputt",
    "Miete wird ab nächstem Monat teurer",
    "Zug mit {n} Minuten Verspätung",
    "Abendessen bei {p} und {q}",
    "{X}: Tests repariert",
    "Im Park gelesen",
    "Keller aufgeräumt",
)

PT = (
    "Compras: pão, queijo, maçãs",
    "Passeio com {p} à beira-rio",
    "Dia longo no trabalho, cansado",
    "Roupa lavada",
    "{p} ligou, está tudo bem",
    "Arranjei a bicicleta",
    "Choveu o dia todo",
    "A máquina de café do escritório avariou outra vez",
    "A renda sobe no próximo mês",
    "Comboio com {n} minutos de atraso",
    "Jantar em casa de {p} e {q}",
    "{X}: testes corrigidos",
    "Li um pouco no parque",
    "Arrumei a garagem",
)

#: Section headings people put in daily notes, by style.
HEADINGS = {
    "bullets": ("## Home", "## Work", "## Errands", "## Misc"),
    "worklog": ("## Morning", "## Afternoon", "## Notes"),
    "de": ("## Arbeit", "## Zuhause", "## Sonstiges"),
    "pt": ("## Trabalho", "## Casa", "## Outros"),
}
MEETINGS = ("Standup", "Weekly sync", "Planning", "Retro", "1:1 with {p}", "Architecture review", "{X} check-in", "All hands")
