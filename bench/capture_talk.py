"""Labelled conversations for bench/lifecycle.py: turns written the way
people talk to an assistant (run-on sentences, lower case, abbreviations,
pronouns, changes of mind, chit-chat, questions, requests), in the
languages capture reads, each sentence labelled with what memory should
keep of it.

Two halves: :data:`DEV` (the rules may be judged on it) and
:data:`HELD_OUT` (never looked at when rules are chosen; the benchmark
reports it beside the other). Each conversation is one person, starting
from their own ``MEMORY.md`` (``seed``).

A turn is its sentences; a sentence is plain text (nothing to keep) or an
:class:`S`: the category it should be stored with, the sentence of the
seed or an earlier turn it restates (``dup``) or changes (``replaces``),
and the name an entry must hold when the sentence speaks of someone by a
pronoun (``named``). Sentences are joined with a space (none between CJK
sentences), so the labelled boundaries are where a segmenter should cut.

Data, not code: over 500 lines because the conversations are the data.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class S:
    """A sentence worth keeping: its ``category``; ``dup`` (a restatement
    of the seed line or earlier sentence holding this text: nothing new to
    store), ``replaces`` (the seed line or earlier sentence, by a piece of
    its text, that this one changes: its entry should be superseded) and
    ``named`` (the person the stored entry must name)."""

    text: str
    category: str | None = None
    dup: str | None = None
    replaces: str | None = None
    named: str | None = None


@dataclass(frozen=True)
class Turn:
    role: str
    sentences: tuple[S | str, ...]

    @property
    def text(self) -> str:
        out = ""
        for s in self.sentences:
            piece = s.text if isinstance(s, S) else s
            if out and not (_cjk(out[-1]) and _cjk(piece[0])):
                out += " "
            out += piece
        return out


@dataclass(frozen=True)
class Conversation:
    name: str
    seed: str
    turns: tuple[Turn, ...]


def _cjk(ch: str) -> bool:
    return "\u3000" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef"


def U(*sentences: S | str) -> Turn:
    return Turn("user", sentences)


def A(*sentences: S | str) -> Turn:
    return Turn("assistant", sentences)


# -- the development half -------------------------------------------------------------

DEV: tuple[Conversation, ...] = (
    Conversation(
        "maya",
        "# Memory\n\n## People\n- My sister Ada lives in Lagos.\n- My manager is Tom Becker.\n\n"
        "## Work\n- Gullwing stores raw tide readings in InfluxDB.\n- I drink green tea in the afternoon.\n",
        (
            U("hey, quick one before my standup"),
            A("Sure, what do you need?"),
            U(S("Please remember that my dentist is Dr. Almeida at Clinica Foz.", "entity"), "I keep forgetting the name lol"),
            U("can you draft a reply to Tom saying I'll be 10 min late?"),
            A("Done: 'Hi Tom, running about 10 minutes late, see you soon.'"),
            U(S("Actually, my sister Ada lives in Abuja now, not Lagos.", "entity", replaces="Ada lives in Lagos")),
            U(
                S("She moved there in March for a job at the central bank.", "entity", named="Ada"),
            ),
            U("what's the capital of Australia again?"),
            U(S("We switched Gullwing to TimescaleDB last week, the InfluxDB costs were insane.", "decision", replaces="InfluxDB")),
            U("ugh, long day"),
            U(S("My phone number is 07700 900123 btw.", "entity")),
            U(S("I'm vegetarian, so no meat suggestions please.", "preference")),
            U("Can you find me a pizza place near the office?"),
            A("Try Forno Nero on Rua das Flores, it's 5 min from you."),
            U("perfect thanks"),
            U(S("oh and I don't drink green tea anymore, it's black coffee now.", "preference", replaces="green tea")),
            U("How do I reset my router?"),
            U(S("The standup is at 9:15 a.m. every weekday.", "fact")),
            U(S("My manager is Tom Becker, as I said.", dup="My manager is Tom Becker")),
            U("haha yeah I know"),
            U("If I ever move to Berlin I'll need a new bank."),
            U(S("My son Leo starts school on Sept. 4.", "entity"), "He's so excited."),
            U(S("Dr. Almeida's clinic is on Av. da Boavista 1200.", "entity")),
            U("remind me what I said about the dentist?"),
            U("ok bye"),
        ),
    ),
    Conversation(
        "jonas",
        "# Memory\n\n- Ich wohne in Köln.\n- Mein Auto ist ein grauer Golf.\n- Le bureau est à Lyon.\n",
        (
            U("Hallo! Kannst du mir kurz helfen?"),
            A("Klar, worum geht es?"),
            U(S("Merk dir bitte: mein Hausarzt ist Dr. Weber in der Hauptstr. 5.", "entity")),
            U("Wie wird das Wetter morgen?"),
            U(S("Ich bin jetzt nach Bonn gezogen, nicht mehr Köln.", "fact", replaces="Ich wohne in Köln")),
            U("Das war ein ziemlicher Stress, z. B. mit den Kisten."),
            U(S("Meine Frau heißt Petra.", "entity"), S("Sie arbeitet bei der Telekom.", "entity", named="Petra")),
            U(S("Wir haben beschlossen, im Mai nach Portugal zu fahren.", "decision")),
            U("Weißt du, wie spät es in Lissabon ist?"),
            U(S("Ich trinke morgens immer zwei Tassen Kaffee.", "preference")),
            U("Danke dir!"),
            U(S("Mein Auto ist jetzt ein E-Auto, den Golf haben wir verkauft.", "fact", replaces="grauer Golf")),
            U("Bonjour, je vais écrire en français maintenant."),
            U(S("Je préfère les réunions le matin, vers 9 h.", "preference")),
            U(S("Nous avons déménagé le bureau à Grenoble, plus à Lyon.", "fact", replaces="Le bureau est à Lyon")),
            U("Tu peux me rappeler l'heure du train ?"),
            U(S("Mon collègue M. Dubois s'occupe du budget.", "entity")),
            U(S("Mon numéro de bureau est le 04 76 12 34 56.", "entity")),
            U("C'est bon, merci beaucoup."),
            U("J'ai faim."),
            U(S("N'oublie pas que la réunion d'équipe est le mardi.", "fact")),
            U(S("Ich bevorzuge Zugfahrten statt Flüge, wenn es geht.", "preference")),
            U("Tschüss!"),
            U(S("Meine Frau heißt Petra, das weißt du ja.", dup="Meine Frau heißt Petra")),
            U("ok"),
        ),
    ),
    Conversation(
        "lucia",
        "# Memory\n\n- Vivo en Sevilla.\n- 我喜欢喝绿茶。\n- 私の趣味はテニスです。\n",
        (
            U("Hola, ¿qué tal?"),
            A("¡Hola! ¿En qué te ayudo?"),
            U(S("Mi dentista es la Dra. García, en la Av. de la Constitución.", "entity")),
            U("¿Me recomiendas una película?"),
            U(S("Ahora vivo en Madrid, ya no en Sevilla.", "fact", replaces="Vivo en Sevilla")),
            U(S("Mi jefe es el Sr. Ortega.", "entity"), "Es muy exigente, jaja."),
            U(S("Hemos decidido contratar a dos personas más en enero.", "decision")),
            U(S("Prefiero que me escribas en español.", "preference")),
            U("Gracias, eso es todo."),
            U(S("Mi hermano Pablo trabaja en Valencia.", "entity")),
            U(S("Se mudó allí el año pasado.", "entity", named="Pablo")),
            U("你好！"),
            U(S("我现在喝咖啡，不喝绿茶了。", "preference", replaces="绿茶")),
            U(S("我的生日是十月二日。", "fact")),
            U("今天好累啊。"),
            U("明天天气怎么样？"),
            U(S("我们决定下个月去上海。", "decision")),
            U("こんにちは。"),
            U(S("今はテニスじゃなくてゴルフをしています。", "fact", replaces="テニス")),
            U("おすすめのレストランはありますか？"),
            U(S("私の上司は鈴木さんです。", "entity")),
            U("ありがとう！"),
            U(S("La reunión es a las 8 p.m. del lunes.", "fact")),
            U("¿Qué hora es en Tokio?"),
            U("vale, adiós"),
        ),
    ),
    Conversation(
        "sam",
        "# Memory\n\n- My partner Alex works at the hospital.\n- We use GitHub Actions for CI.\n- My gym is PureFit on Main St.\n",
        (
            U("morning!"),
            A("Good morning! What's up?"),
            U("can you summarise this article for me"),
            U(S("fyi we moved CI from GitHub Actions to Buildkite yesterday.", "decision", replaces="GitHub Actions")),
            U(S("I can't stand open-plan offices.", "preference")),
            U(S("Alex got a new job, he works at the university now.", "entity", replaces="Alex works at the hospital")),
            U("what do you think about standing desks?"),
            A("They help some people, especially if you alternate."),
            U("hmm maybe"),
            U(S("J. R. R. Tolkien is my favourite author, I reread LOTR every winter.", "preference")),
            U(S("My email is sam.k@example.net if you need to send stuff.", "entity")),
            U("What's 15% of 240?"),
            U(S("Our rent went up to 1,450 EUR/month, approx. 8% more.", "fact")),
            U("so annoying"),
            U(S("Don't forget that the car's MOT is due on 12 Nov.", "fact")),
            U(S("I switched gyms, I go to Iron Works on 5th Ave. now.", "fact", replaces="PureFit")),
            U("Is it going to rain later?"),
            U(S("We're going with Postgres 16 for the new service, decided in the arch review.", "decision")),
            U("nice"),
            U(S("My daughter's name is Ivy.", "entity"), S("She's allergic to peanuts.", "entity", named="Ivy")),
            U("Can you book a table for 4 at 7:30 p.m.?"),
            U(S("I always take the 7:42 train.", "preference")),
            U("thanks, ttyl"),
            U("lol no"),
            U(S("we moved CI to Buildkite, remember.", dup="Buildkite")),
        ),
    ),
)


# -- the held-out half: never looked at when rules are chosen -------------------------

HELD_OUT: tuple[Conversation, ...] = (
    Conversation(
        "priya",
        "# Memory\n\n- My brother Ravi lives in Pune.\n- The team uses Jira for tickets.\n- I run on Tuesdays and Thursdays.\n",
        (
            U("hi there"),
            A("Hi! How can I help today?"),
            U(S("Just so you know, my GP is Dr. K. Menon at St. Mary's.", "entity")),
            U("can you help me write a cover letter?"),
            U(S("Ravi moved to Bangalore last month, he's not in Pune anymore.", "entity", replaces="Ravi lives in Pune")),
            U("That's about it for family news haha"),
            U(S("We've ditched Jira, the team uses Linear now.", "decision", replaces="Jira")),
            U("What's a good name for a cat?"),
            U(S("My cat is called Biscuit.", "entity")),
            U(S("She's 3 and hates the vacuum.", "entity", named="Biscuit")),
            U("Should I get a second one?"),
            U(S("I really dislike phone calls, text me instead.", "preference")),
            U(S("My flight lands at 6:05 a.m. on Fri.", "fact")),
            U("omg so early"),
            U(S("I run on Mondays now, not Tuesdays and Thursdays.", "preference", replaces="I run on Tuesdays")),
            U("How long should a 10k training plan be?"),
            U(S("My manager is Mrs. O'Neill, she's lovely.", "entity")),
            U(S("Note that the quarterly review is on the 3rd.", "fact")),
            U("ok cool"),
            U(S("We decided to hire a contractor for the migration, approx. 3 months.", "decision")),
            U("Can you convert 30 USD to INR?"),
            U(S("My address is 22 Baker St., Flat 4B.", "entity")),
            U(S("The team uses Linear now.", dup="Linear")),
            U("bye!"),
            U("Remember when we talked about Lisbon?"),
        ),
    ),
    Conversation(
        "claire",
        "# Memory\n\n- J'habite à Nantes.\n- Mon médecin est le Dr Morel.\n- Wir nutzen Slack im Team.\n",
        (
            U("Salut !"),
            A("Salut, comment je peux t'aider ?"),
            U(S("Depuis janvier j'habite à Rennes, plus à Nantes.", "fact", replaces="J'habite à Nantes")),
            U("Il fait beau aujourd'hui."),
            U(S("Mon nouveau médecin est le Dr. Lefèvre, av. Janvier.", "entity", replaces="Dr Morel")),
            U("Tu connais un bon resto à Rennes ?"),
            U(S("Je n'aime pas du tout la coriandre.", "preference")),
            U(S("Ma fille Chloé a 12 ans.", "entity"), S("Elle fait du violon.", "entity", named="Chloé")),
            U("Quelle heure est-il à Montréal ?"),
            U(S("On a décidé de repeindre la cuisine en vert.", "decision")),
            U("merci !"),
            U(S("Mon adresse mail est claire.b@example.fr.", "entity")),
            U("Guten Tag, jetzt auf Deutsch."),
            U(S("Wir sind von Slack auf Teams umgestiegen.", "decision", replaces="Slack")),
            U("Kannst du mir eine E-Mail formulieren?"),
            U(S("Mein Chef ist Hr. Schulz, sehr pünktlich.", "entity")),
            U(S("Ich mag keine Meetings nach 17 Uhr.", "preference")),
            U("Was kostet ein Zugticket nach Paris?"),
            U(S("Vergiss nicht: das Projekt endet am 30. Juni.", "fact")),
            U("Super, danke."),
            U(S("Meine Tochter heißt Chloé, wie gesagt.", dup="Chloé")),
            U("bis bald"),
            U(S("Je prends toujours le TGV de 7 h 10.", "preference")),
            U("Ah, j'ai oublié mon parapluie."),
            U("à plus"),
        ),
    ),
    Conversation(
        "kenji",
        "# Memory\n\n- 私は大阪に住んでいます。\n- 我每天早上跑步。\n- Trabajo en Barcelona.\n",
        (
            U("おはよう"),
            A("おはようございます。何をお手伝いしましょうか？"),
            U(S("覚えておいて、私の歯医者は田中先生です。", "entity")),
            U(S("先月、大阪から東京に引っ越しました。", "fact", replaces="大阪に住んでいます")),
            U("東京の天気はどう？"),
            U(S("私はコーヒーより紅茶が好きです。", "preference")),
            U(S("妻の名前はユキです。", "entity")),
            U("ありがとう、助かった"),
            U(S("我们决定明年换新的办公室。", "decision")),
            U(S("我现在晚上跑步，不是早上了。", "preference", replaces="跑步")),
            U("你能帮我翻译这句话吗？"),
            U(S("我的邮箱是 kenji.w@example.jp。", "entity")),
            U("哈哈"),
            U(S("Ahora trabajo en Valencia, ya no en Barcelona.", "fact", replaces="Barcelona")),
            U("¿Cuánto cuesta un billete a Madrid?"),
            U(S("Mi número es el 612 34 56 78.", "entity")),
            U(S("Prefiero las reuniones por la mañana.", "preference")),
            U("Gracias."),
            U(S("El Sr. Yamada es mi socio.", "entity"), S("Él vive en Kioto.", "entity", named="Yamada")),
            U("会议几点开始？"),
            U(S("妻の名前はユキです。", dup="ユキ")),
            U("じゃあね"),
            U(S("Hemos decidido abrir una oficina en Lisboa.", "decision")),
            U("no sé"),
            U("またね"),
        ),
    ),
    Conversation(
        "dan",
        "# Memory\n\n- The office Wi-Fi password rotates monthly.\n- My running shoes are Nike Pegasus.\n- My dad lives in Leeds.\n",
        (
            U("yo"),
            A("Hey! What can I do for you?"),
            U(S("remember my accountant is Mr. T. Hughes, he's at Hughes & Co.", "entity")),
            U("can u check if my flight is delayed"),
            U(S("My dad moved to York in the spring, so not Leeds anymore.", "entity", replaces="dad lives in Leeds")),
            U(S("He's 71 and still cycles everywhere.", "entity", named="dad")),
            U("wild right"),
            U(S("I've switched to Hoka running shoes, the Pegasus hurt my knee.", "preference", replaces="Pegasus")),
            U("Which is better, Hoka Clifton or Bondi?"),
            U(S("Our sprint review is on Wed. at 2 p.m.", "fact")),
            U(S("I hate being called Daniel, it's Dan.", "preference")),
            U("What's the longest river in Europe?"),
            U(S("We agreed to freeze deploys from Dec. 20 to Jan. 3.", "decision")),
            U("cool cool"),
            U(S("My kid's school is St. Anne's Primary.", "entity")),
            U("I might take up golf, who knows."),
            U(S("Keep in mind I'm on call every 4th week.", "fact")),
            U("ok that's all"),
            U(S("My dad lives in York now.", dup="York")),
            U("Do you remember my dad's birthday?"),
            U(S("My wife is Sarah, she's a vet.", "entity")),
            U(S("Her clinic is in Headingley.", "entity", named="Sarah")),
            U("gotta run"),
            U("thx"),
            U(S("My favourite band is Radiohead, since forever.", "preference")),
        ),
    ),
)


# -- abbreviations --------------------------------------------------------------------

#: Messages holding abbreviations, initials, decimals and times, with their
#: sentences: (language, sentences). A segmenter should cut exactly between
#: them. Written without a segmenter in view; halves as above.
ABBREVIATIONS_DEV: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("en", ("My dentist is Dr. Almeida at Clinica Foz.", "Thanks!")),
    ("en", ("The standup is at 9:15 a.m. every day.", "Don't be late.")),
    ("en", ("Call Mrs. Patel at 5 p.m. tomorrow.",)),
    ("en", ("I use Python 3.12 and numpy 1.26 at work.", "It's fine.")),
    ("en", ("My boss is J. K. Harris from accounting.", "Weird, right?")),
    ("en", ("We ship v2.4.1 on Friday vs. Monday last time.", "OK.")),
    ("en", ("Dr. Kim moved to St. Louis last year.", "He likes it.")),
    ("de", ("Mein Zahnarzt ist Dr. Müller in der Hauptstr. 5.", "Danke!")),
    ("de", ("Wir treffen uns z. B. um 8 Uhr, d. h. früh.", "Merk dir das.")),
    ("de", ("Am 3. Mai habe ich Geburtstag.", "Bitte merken.")),
    ("de", ("Prof. Dr. Schmidt ist mein Betreuer.", "Er ist nett.")),
    ("fr", ("Mon médecin est le Dr. Martin, av. de la Gare.", "Merci.")),
    ("fr", ("M. Dupont est mon patron.", "Il est sympa.")),
    ("fr", ("Le rendez-vous est à 9 h 30, p. ex. lundi.", "Ok.")),
    ("es", ("Mi dentista es la Dra. García en la Av. Libertad.", "Gracias.")),
    ("es", ("El Sr. López es mi jefe.", "Es simpático.")),
    ("es", ("Quedamos a las 8 p.m. el lunes.", "Recuérdalo.")),
    ("zh", ("记住我的牙医是王医生。", "他在北京。")),
    ("ja", ("私の歯医者は田中先生です。", "駅の近くです。")),
)

ABBREVIATIONS_HELD_OUT: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("en", ("My GP is Dr. K. Menon at St. Mary's.", "She's great.")),
    ("en", ("The flight lands at 6:05 a.m. on Fri.", "Ugh.")),
    ("en", ("Send it to Mr. O'Brien, Apt. 4, 12 Elm St. in Dublin.",)),
    ("en", ("Pick me up at the Grand Hotel, corner of 3rd St. and Pine Ave. at noon.", "Cheers.")),
    ("en", ("The U.S. office opens at 8 a.m. Eastern.",)),
    ("en", ("Version 3.10.2 fixed it, e.g. the login bug.", "Nice.")),
    ("de", ("Mein Chef ist Hr. Schulz, Tel. 030 1234.", "Danke.")),
    ("de", ("Frau Dr. med. Vogel hat Sprechstunde Mo. bis Fr. ab 8 Uhr.", "Gut zu wissen.")),
    ("de", ("Die Miete steigt um ca. 4,5 Prozent, inkl. Nebenkosten.", "Schade.")),
    ("fr", ("Mon kiné, M. Petit, consulte le sam. matin.", "Pratique.")),
    ("fr", ("J'ai rendez-vous avec le Dr. Lefèvre à 14 h.", "Merci.")),
    ("fr", ("Le prix est de 3,5 M. d'euros environ.", "C'est cher.")),
    ("es", ("El Dr. Ramírez atiende de 9 a.m. a 2 p.m.", "Perfecto.")),
    ("es", ("Mi tía vive en la C/ Mayor n.º 7, 2.º izq.", "Gracias.")),
    ("es", ("La cuota sube a 12,50 € al mes, etc.", "Vaya.")),
    ("zh", ("王博士说药要一天吃2.5片。", "谢谢你！")),
    ("ja", ("新しい住所は東京都港区1-2-3です。", "よろしくお願いします。")),
    ("ja", ("田中先生は午後3時に来ます。", "ありがとう。")),
)
