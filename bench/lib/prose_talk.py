"""The talk around the facts (bench/memory_prose.py): greetings, small talk about life, and
ComfyUI chatter in the same everyday register, built from templates and slot fillers so a
conversation of 25K tokens rarely says the same thing twice. Each function returns exchanges:
(what the user says, what the assistant answers)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from .prose_howto import HOW_TO, NODE_USER, NODES

Exchange = tuple[str, str]


def pick(rng: random.Random, *pools: Sequence[str]) -> str:
    return " ".join(rng.choice(pool) for pool in pools)


def fill(rng: random.Random, template: str, slots: dict[str, Sequence[str]]) -> str:
    return template.format(**{k: rng.choice(v) for k, v in slots.items() if f"{{{k}}}" in template})


# --- greetings and goodbyes -----------------------------------------------------------------------

HELLO_USER = (
    "Hi again!",
    "Hey, it's me again.",
    "Morning!",
    "Evening! I've got an hour to myself for once.",
    "Hello hello.",
    "Back again, hope you don't mind.",
    "Good afternoon!",
    "Hey there, long week.",
    "Hi, I've got a bit of time before dinner.",
    "Right, where were we?",
    "Hiya!",
    "Hello! The house is quiet for once.",
    "Hi, quick session today I think.",
)
HELLO_USER_MORE = (
    "",
    "",
    "Coffee in hand, ready to go.",
    "I've been looking forward to this all day.",
    "My head is a bit all over the place today.",
    "It's been a strange few days.",
    "I finally cleared my desk, so I have room to think.",
    "I can't stay long though.",
)
HELLO_ASSISTANT = (
    "Welcome back! What are we making today?",
    "Good to see you again. How's everything going?",
    "Hi! Ready when you are.",
    "Hello again! Anything new since last time?",
    "Hey! What's on the menu today, picture-wise?",
    "Nice to have you back. What's the plan?",
    "Hi there! Shall we pick up where we left off, or start something fresh?",
)
BYE_USER = (
    "Right, that's enough for tonight, thanks for the help.",
    "I'll leave it there for today.",
    "Dinner's ready, got to go!",
    "Thanks, I'll try that properly tomorrow.",
    "Okay, signing off for now.",
    "Brilliant, that's all I needed. Speak soon.",
    "My eyes are closing, so I'll stop here.",
    "Someone needs the computer, so I'd better go.",
)
BYE_ASSISTANT = (
    "Enjoy your evening!",
    "Anytime. Have a good one!",
    "Good luck with it, talk soon.",
    "Sleep well, and don't stay up rendering all night.",
    "See you next time!",
    "Take care, and have fun with it.",
    "Bye for now, it was a good session.",
)


def greeting(rng: random.Random) -> Exchange:
    return pick(rng, HELLO_USER, HELLO_USER_MORE).strip(), rng.choice(HELLO_ASSISTANT)


def farewell(rng: random.Random) -> Exchange:
    return rng.choice(BYE_USER), rng.choice(BYE_ASSISTANT)


# --- small talk -----------------------------------------------------------------------------------

LIFE_SLOTS: dict[str, Sequence[str]] = {
    "weather_bad": (
        "grey and drizzly",
        "ridiculously hot",
        "windy and cold",
        "foggy every morning",
        "wet and miserable",
        "all over the place",
    ),
    "weather_tail": (
        "so I've been stuck inside",
        "and the washing never dries",
        "and everyone's in a mood about it",
        "so the heating is back on",
    ),
    "weather_good": ("bright and crisp", "properly warm", "sunny for once", "mild and still"),
    "work_bad": ("pretty hectic", "a bit of a grind", "full of meetings", "one long to-do list"),
    "work_good": ("surprisingly calm", "better than usual", "actually fun", "short and sweet"),
    "meal": (
        "a huge bowl of pasta",
        "leftover curry",
        "cheese on toast",
        "a quick stir fry",
        "soup and crusty rolls",
        "fish and chips",
        "a very sad salad",
        "pancakes, somehow",
    ),
    "house": (
        "Everyone else is watching a film",
        "The house is finally quiet",
        "The dishwasher is humming away",
        "Someone is practising scales upstairs",
        "The neighbours are having a party",
        "It's raining on the skylight",
    ),
    "errand": (
        "the supermarket",
        "the post office",
        "the dentist",
        "the hardware store",
        "the bank",
        "the tip with a carload of junk",
    ),
}
LIFE_USER = (
    ("down", "The weather has been {weather_bad} all week, {weather_tail}."),
    ("up", "The weather has finally turned {weather_good}, so I had lunch outside."),
    ("down", "Work has been {work_bad} lately, and my brain is mush."),
    ("up", "Work was {work_good} today, so I'm in a decent mood."),
    ("neutral", "I just had {meal} for dinner and now I'm ready to tinker."),
    ("neutral", "{house}, so I've got the desk to myself."),
    ("down", "I spent half the morning at {errand}, what a waste of time."),
    ("neutral", "I'm on my second coffee of the day, so expect typos."),
    ("neutral", "I found an old sketchbook in a drawer, funny to see my drawings from school."),
    ("down", "It's been one of those days where nothing goes to plan."),
    ("down", "I've got a bit of a cold, so forgive me if I'm slow today."),
    ("neutral", "We had friends over last night and I'm paying for it this morning."),
    ("down", "The internet went down for a whole day, I didn't know what to do with myself."),
    ("up", "I finally tidied my desk and found the pens I thought I'd lost."),
    ("neutral", "I've been reading about old printmaking techniques, it's oddly relaxing."),
    ("neutral", "My phone is full of screenshots of pictures I want to recreate."),
    ("down", "I keep meaning to go to bed earlier and then it's midnight again."),
    ("up", "I went for a long walk at lunch to clear my head, and it worked."),
    ("up", "Payday today, so I treated myself to a nice notebook."),
    ("down", "The boiler is playing up again, so I'm typing this in a jumper and a hat."),
    ("neutral", "I've been listening to old radio plays in the background, very soothing."),
    ("up", "I got a message from an old friend out of the blue today, it made my week."),
    ("down", "Someone started drilling next door at seven this morning, I'm running on no sleep."),
    ("neutral", "I reorganised the kitchen cupboards on a whim, no idea why."),
    ("neutral", "I'm trying to drink more water, so there's a giant bottle next to my keyboard."),
    ("up", "I finished a jigsaw puzzle that's been on the dining table for ages."),
    ("down", "I spilled tea over my notes, so I'm going from memory today."),
    ("neutral", "The clocks changed and my body has no idea what time it is."),
    ("up", "I managed a whole week without doomscrolling, I'm weirdly proud."),
    ("down", "My computer fan sounds like a jet engine today."),
    ("neutral", "I've been trying to learn a few keyboard shortcuts, slowly."),
    ("up", "The house smells of fresh coffee and I've got nowhere to be."),
    ("neutral", "I've been rearranging the furniture in my head all day instead of working."),
)
LIFE_ASSISTANT = {
    "down": (
        "Sorry to hear that, hopefully tomorrow is kinder.",
        "Oof, hope it eases off soon.",
        "Those days happen. Let's make something nice to make up for it.",
        "That sounds draining. We'll keep things gentle today.",
        "Ugh, that's annoying. A bit of making things might help.",
    ),
    "up": (
        "That's lovely to hear!",
        "Nice, sounds like a good day.",
        "Ha, good for you.",
        "Love that. Let's ride the good mood.",
        "That's the spirit.",
    ),
    "neutral": (
        "Ha, fair enough.",
        "Sounds cosy.",
        "I can picture that.",
        "Glad you found a moment for this.",
        "Well, you're here now, that's what counts.",
        "Funny how that goes.",
    ),
}
LIFE_FOLLOW = (
    "",
    "",
    "What would you like to work on?",
    "Anything in particular on your mind today?",
    "Shall we start with something small?",
    "Want to continue the last project?",
)


def chat_line(rng: random.Random) -> tuple[str, str]:
    """A line of small talk and the assistant's reaction to it."""
    tone, template = rng.choice(LIFE_USER)
    return fill(rng, template, LIFE_SLOTS), rng.choice(LIFE_ASSISTANT[tone])


def small_talk(rng: random.Random) -> Exchange:
    said, answer = chat_line(rng)
    return said, f"{answer} {rng.choice(LIFE_FOLLOW)}".strip()


# --- ComfyUI chatter ------------------------------------------------------------------------------

# fmt: off
_SUBJECTS = """
a lighthouse on a stormy cliff | the lighthouse
a cosy reading nook | the nook
a fox in a snowy forest | the fox
an old bicycle leaning on a wall | the bicycle
a market street at dusk | the market
a robot tending a vegetable patch | the robot
a teapot shaped like a cottage | the teapot
a mountain village at dawn | the village
a jellyfish floating through the sky | the jellyfish
a tired knight resting under an oak | the knight
a city skyline in the rain | the skyline
a bowl of fruit on a windowsill | the fruit bowl
a sailing boat in a harbour | the boat
an owl on a fence post | the owl
a bakery window at night | the bakery window
a desert road at sunset | the road
a treehouse full of lanterns | the treehouse
a cat asleep on a pile of books | the sleeping cat
an astronaut in a sunflower field | the astronaut
a tram climbing a steep hill | the tram
a misty lake with a wooden jetty | the jetty
a dragon made of clouds | the dragon
a greenhouse full of strange plants | the greenhouse scene
a violin maker's workshop | the workshop
a snowy train platform | the platform
a giant tortoise carrying a town | the tortoise town
a rooftop garden above a busy city | the rooftop
a paper boat on a rainy street | the paper boat
"""
SUBJECTS = tuple(tuple(line.split(" | ")) for line in _SUBJECTS.strip().splitlines())
ART_SLOTS: dict[str, Sequence[str]] = {
    "style": ("a watercolour style", "a children's book style", "flat vector art",
              "a moody oil painting look", "the style of a retro travel poster", "ink and wash",
              "a gritty comic style", "a dreamy film look", "a cosy storybook style", "pixel art",
              "a vintage postcard look", "a clean architectural drawing style", "a linocut style",
              "a soft gouache look", "a woodblock print style", "a faded polaroid look"),
    "quality": ("better than I expected", "a bit muddy", "really promising", "strangely dark",
                "way too busy", "almost there", "a bit plastic", "nicer than last time",
                "oddly washed out", "close but not quite", "a bit chaotic", "surprisingly good"),
    "part": ("sky", "background", "lighting", "water", "foreground", "horizon", "main subject",
             "colour balance", "skin tone", "texture", "shadow side", "border"),
    "problem": ("looks smeared", "is far too saturated", "has weird blotches",
                "doesn't match the rest", "keeps coming out blurry", "looks like plastic",
                "has odd stripes in it", "goes murky", "looks pasted on", "is completely flat"),
    "light": ("golden hour", "soft morning", "moonlit", "overcast", "candlelit", "harsh midday"),
    "words": ("twenty", "twenty-five", "thirty", "about twenty"),
}
PROJECT_USER = (
    "Tonight I'd like to make {subject} in {style}.",
    "I'm thinking of trying {subject}, maybe in {style}.",
    "New idea: {subject}, done in {style}. What do you think?",
    "Can we try {subject}? I'm picturing {style}.",
    "I saw something online and now I want {subject} in {style}.",
    "I keep imagining {subject}, and I think {style} would suit it.",
    "Next project: {subject}. Something like {style}.",
    "My head is full of {subject} today, probably in {style}.",
    "Could we do {subject} in {style}? I've been thinking about it all week.",
)
PROJECT_DETAIL = (
    "", "", "Something calm and a bit melancholy.", "I want it to feel like an old illustration.",
    "Lots of {light} light if possible.", "Nothing too busy, I like simple pictures.",
    "It's for the wall above my desk.", "I'd like it to look hand-made rather than digital.",
    "Bright and cheerful, the opposite of my week.", "Maybe a bit of mystery in it.",
    "Wide, like a film still.", "Ideally something I could print small.",
)
PROJECT_ASSISTANT = (
    "Lovely idea.", "Oh, that'll be fun.", "Good choice, {short} should suit that style.",
    "I like that one.", "That's a nice combination.", "Ooh, {short} in that style could work.",
    "That's a strong idea, it already sounds like a picture.", "Fun! {Short} is a good subject.",
    "Nice, I can see it already.", "That's a charming one.",
)
PROMPT_ADVICE = (
    "Start the prompt with {short}, then the setting, then the style words.",
    "Keep the prompt short at first and add details once the composition works.",
    "Describe the light early in the prompt, {light} light would shape everything else.",
    "Put the style words near the start so they carry more weight.",
    "Use the negative prompt for things you keep seeing but don't want, like blur.",
    "Mention the time of day, it changes the whole mood around {short}.",
    "Try describing what the camera sees, like a wide shot of {short} or a close-up.",
    "Say where {short} sits in the frame, models love to put everything in the middle.",
    "Give {short} one or two concrete details, like colours or materials.",
    "Describe the mood in plain words, like quiet, lonely or busy.",
)
SETTING_ADVICE = (
    "Around {words} steps is plenty for a first pass.",
    "A cfg of six or seven usually keeps things balanced.",
    "Render a small batch so you can pick the best composition.",
    "Try a square image first, then change the shape once you like it.",
    "Leave the sampler on its default for now and judge the composition first.",
    "Queue a few variations and compare them side by side.",
    "Keep the resolution modest until the layout is right.",
    "A wide format suits {short} better than a square, I think.",
    "Don't touch the advanced settings yet, the prompt matters far more at this stage.",
    "Let it run with a random seed a few times before settling on one.",
)
PROGRESS_USER = (
    "The first batch came out {quality}.", "Okay, results are in: {quality}.",
    "Hmm, the last run looks {quality}.", "I ran it a few times and it's {quality}.",
    "Right, {short} is {quality}.", "So, {short} came out {quality}.",
    "Tried it, and honestly it's {quality}.", "Four runs later: {quality}.",
)
PROGRESS_MORE = (
    "The {part} {problem} though.", "But the {part} {problem}.",
    "Only the {part} {problem}.", "Everything's fine except the {part}, which {problem}.",
    "Oh, and the {part} {problem}.", "The annoying bit is the {part}, it {problem}.",
)
FIX_ADVICE = (
    "Try describing the {part} more precisely, the model fills gaps with whatever is common.",
    "You could mask just the {part} and inpaint it separately.",
    "A second pass at a low denoise often cleans that kind of thing up.",
    "Lowering the cfg a touch can calm it down.",
    "Adding a few words about the {part} to the negative prompt might help.",
    "Sometimes a different seed is all it takes, so try a few before changing anything else.",
    "A slightly longer step count can smooth that out, but don't overdo it.",
    "Try a softer lighting description, harsh light exaggerates that.",
    "That often happens when the prompt asks for too much at once, so trim it a little.",
    "Describe the {part} with simpler words, fancy adjectives confuse the model.",
    "Check that the style words aren't fighting with the description of the {part}.",
    "A touch of film grain in the prompt can hide that kind of artefact.",
)
ENCOURAGE = (
    "", "", "It's already heading somewhere nice.", "You're close, honestly.",
    "Send me another description once you've tried it.", "Let's see what the next run gives.",
    "Keep going, {short} is worth it.", "The composition sounds right at least.",
)
ANSWER_EXTRA = (  # a closing remark now and then (EXTRA_SHARE of the answers)
    "If it still looks off, describe what you see and we'll adjust from there.",
    "Keep the version you like before experimenting further, so you can compare.",
    "It's worth jotting down the settings that worked, they're easy to forget.",
    "Don't worry if the first try is rough, the second is usually much closer.",
    "Small steps are easier to judge than big jumps, so change one thing at a time.",
    "And take a break if it gets frustrating, fresh eyes help a lot.",
    "The preview is a good enough guide for now, no need to render big yet.",
    "Once it works, it's a nice one to reuse as a starting point for other pictures.",
    "Most of the fun is in the trying, honestly.", "You'll get a feel for it after a few rounds.",
    "There's no single right answer here, trust your eye.",
    "People overthink this part, so don't worry too much.",
    "It gets quicker once you've done it a couple of times.",
    "Tell me if anything in that is unclear.", "Happy to go through it slowly if you like.",
)
EXTRA_SHARE = 0.3


def extra(rng: random.Random) -> str:
    """A closing remark (with its leading space) for EXTRA_SHARE of the answers, else ""."""
    return f" {rng.choice(ANSWER_EXTRA)}" if rng.random() < EXTRA_SHARE else ""


REACTION_USER = (
    "Okay, I'll give that a go.", "Makes sense, trying it now.", "Ah, that's clever.",
    "Right, one more run then.", "I wouldn't have thought of that.", "Good shout.",
    "Hmm, worth a try.", "Oh, that's simple enough.", "Thanks, that helps.",
    "Got it, off I go.", "Ha, obvious when you say it.", "Okay, noted.",
)
REACTION_ASSISTANT = (
    "Let me know how it turns out.", "Fingers crossed!", "Have fun with it.",
    "Shout if it gets stuck.", "I'm curious to hear how it goes.", "Good luck!",
    "Can't wait to hear about it.", "Enjoy!", "Any time.",
)
# fmt: on
TWEAKS = (
    (
        "Would a bigger image help with the {part}?",
        "Maybe a little, but render at the model's usual size first and enlarge afterwards. A "
        "bigger canvas straight away tends to repeat things and muddle the composition.",
    ),
    (
        "Should I try another sampler for this one?",
        "You can, but change one thing at a time. If the composition is right, the sampler "
        "only changes the finish, so compare two or three side by side.",
    ),
    (
        "Could I make the {part} more dramatic?",
        "Sure, describe it with stronger words near the start of the prompt, and mention the "
        "light on it. Contrast in the description usually turns into contrast in the picture.",
    ),
    (
        "Is it worth adding a lora for this style?",
        "Only if the prompt alone can't get there. Try the plain prompt with a couple of style "
        "words first; a lora is easier to judge once you know what the base model does.",
    ),
    (
        "How do I stop it adding random people everywhere?",
        "Say what the scene contains rather than what it lacks, and put people in the negative "
        "prompt. An empty street described as quiet and deserted helps too.",
    ),
    (
        "Can I keep this composition but change the season?",
        "Yes, run it through img2img with a moderate strength and a prompt that describes the "
        "new season. The layout stays and the colours and details follow the words.",
    ),
)


def project(rng: random.Random) -> list[Exchange]:
    """A small picture project: the idea, first results and a fix, a tweak, a thank-you; the
    slots keep their values through it."""
    subject, short = rng.choice(SUBJECTS)
    slots = {k: [rng.choice(v)] for k, v in ART_SLOTS.items()}
    slots.update(subject=[subject], short=[short], Short=[short[0].upper() + short[1:]])

    def say(*pools: Sequence[str]) -> str:
        return fill(rng, pick(rng, *pools).strip(), slots)

    out = [(say(PROJECT_USER, PROJECT_DETAIL),
            say(PROJECT_ASSISTANT, PROMPT_ADVICE, SETTING_ADVICE) + extra(rng))]  # fmt: skip
    if rng.random() < 0.8:
        out.append((say(PROGRESS_USER, PROGRESS_MORE), say(FIX_ADVICE, ENCOURAGE) + extra(rng)))
    if rng.random() < 0.4:
        asked, answer = rng.choice(TWEAKS)
        out.append((fill(rng, asked, slots), answer + extra(rng)))
    if rng.random() < 0.3:
        out.append((rng.choice(REACTION_USER), rng.choice(REACTION_ASSISTANT)))
    return out


SHARES = (
    (
        "Look, I finally got a picture I'm proud of!",
        "That's brilliant, well done! It's great when it finally clicks.",
    ),
    (
        "I think that last one is my favourite so far.",
        "Love to hear it. You've come a long way with this.",
    ),
    (
        "My friend asked if I could make one for her, which was flattering.",
        "That's a lovely compliment. Ask her what she'd like on it and we'll plan it together.",
    ),
    (
        "I printed one of my pictures and stuck it on the fridge.",
        "Fantastic! A printed picture feels so different from one on a screen.",
    ),
    (
        "I showed my family the latest batch and they were impressed for once.",
        "Well deserved, you've put the hours in.",
    ),
    (
        "Just made a whole set I actually like, which never happens.",
        "That's a lovely feeling. Keep a note of what worked this time.",
    ),
)


def node_question(rng: random.Random) -> Exchange:
    node, answer = rng.choice(NODES)
    return rng.choice(NODE_USER).format(node=node), answer + extra(rng)


ASK_INTRO = (
    "",
    "",
    "",
    "Random question:",
    "Something I've always wondered:",
    "This might be basic, but",
    "Quick one:",
    "I read something confusing online.",
    "Before I forget,",
)
ANSWER_INTRO = ("", "", "", "Good question.", "Not basic at all.", "Short answer first.", "Ah,")


def how_to(rng: random.Random) -> Exchange:
    asked, answer = rng.choice(HOW_TO)
    intro, opener = rng.choice(ASK_INTRO), rng.choice(ANSWER_INTRO)
    if intro.endswith((",", ":")) or intro.endswith("but"):
        asked = asked[0].lower() + asked[1:]
    said = f"{intro} {asked}".strip()
    return said, f"{opener} {answer}".strip() + extra(rng)


def share(rng: random.Random) -> Exchange:
    return rng.choice(SHARES)


TOPICS: tuple[tuple[float, Callable[[random.Random], Exchange | list[Exchange]]], ...] = (
    (0.2, small_talk),
    (0.38, project),
    (0.14, node_question),
    (0.2, how_to),
    (0.08, share),
)
PREFACE = 0.5  # how often a topic's first message opens with a line of small talk


def filler(rng: random.Random) -> list[Exchange]:
    """One topic of talk: one exchange, or a few about one picture; its first message opens
    with a line of small talk now and then (and the answer reacts to it first)."""
    topic = rng.choices([t for _, t in TOPICS], [w for w, _ in TOPICS])[0]
    made = topic(rng)
    exchanges = made if isinstance(made, list) else [made]
    if topic is not small_talk and rng.random() < PREFACE:
        said, answer = chat_line(rng)
        first, reply = exchanges[0]
        exchanges[0] = (f"{said} {first}", f"{answer} {reply}")
    return exchanges


# --- the words around a fact and a question -------------------------------------------------------

FACT_OPENERS = (
    "",
    "",
    "",
    "Oh, news from home:",
    "Random update:",
    "Before I forget,",
    "Life update:",
    "By the way,",
    "So,",
    "Funny week.",
    "Not ComfyUI related, but",
)
FACT_CODAS = (
    "",
    "",
    "",
    "Anyway, that's my news.",
    "It's been a busy few weeks.",
    "Just thought I'd share.",
    "Anyway, shall we get going?",
    "Right, back to pictures.",
)
TIP_OPENERS = (
    "",
    "",
    "Good question.",
    "Happy to help.",
    "Ah, I know that one.",
    "Sure thing.",
    "That's a common one.",
)
TIP_CODAS = (
    "",
    "",
    "",
    "Let me know how it goes.",
    "Give it a try and see.",
    "It's worth a shot.",
)
ASK_ONE = (
    "Remind me, {a}?",
    "Do you remember {a}?",
    "Sorry, my memory is terrible: {a}?",
    "Random one, but {a}?",
    "I was trying to recall {a}, can you help?",
    "Wait, {a}? I've forgotten.",
)
ASK_TWO = (
    "Two things I've lost track of: {a}, and {b}?",
    "Can you remind me {a}, and also {b}?",
    "My memory is a sieve: {a}, and {b}?",
)
ANSWER_ONE = ("If I remember right: {a}.", "I believe it was this: {a}.", "From what we said: {a}.")
ANSWER_TWO = ("If I remember right: {a}; and {b}.", "From what we said: {a}, and {b}.")
