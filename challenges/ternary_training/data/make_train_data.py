"""Generate train_data.txt: deterministic, procedural English-like text.

A small grammar of sentences on a handful of topics (kernels, tensors,
weather, cooking, gardens, travel, music) with shared vocabulary, so that a
tiny language model can pick up spelling, frequent words and sentence shape.
Nothing is copied from existing texts. Run: python make_train_data.py
"""
from __future__ import annotations

import random
from pathlib import Path

TARGET_BYTES = 250_000
SEED = 20240611

WORDS = {
    "kernel_noun": ["kernel", "shader", "loop", "tile", "warp", "block", "thread", "pipeline", "reduction", "scan"],
    "tensor_noun": ["tensor", "matrix", "vector", "buffer", "gradient", "weight", "activation", "batch", "cache", "index"],
    "kernel_verb": ["loads", "stores", "fuses", "splits", "reduces", "sorts", "copies", "scales", "masks", "accumulates"],
    "kernel_adj": ["fast", "slow", "fused", "tiled", "unrolled", "coalesced", "strided", "padded", "sparse", "dense"],
    "weather_noun": ["rain", "wind", "fog", "snow", "sun", "storm", "cloud", "frost", "thunder", "drizzle"],
    "weather_verb": ["falls", "drifts", "rolls", "settles", "clears", "gathers", "lingers", "returns", "fades", "arrives"],
    "place": ["the valley", "the harbour", "the old town", "the hills", "the coast", "the station", "the market",
              "the river", "the forest", "the square", "the garden", "the bridge"],
    "time": ["in the morning", "at noon", "by evening", "after midnight", "before dawn", "on monday", "in spring",
             "in late autumn", "during the night", "all afternoon"],
    "food": ["bread", "soup", "rice", "lentils", "onions", "tomatoes", "noodles", "dumplings", "pancakes", "carrots",
             "garlic", "beans", "apples", "porridge"],
    "cook_verb": ["chop", "stir", "simmer", "bake", "roast", "season", "knead", "boil", "slice", "fry"],
    "cook_adj": ["warm", "crisp", "golden", "soft", "spicy", "sweet", "salty", "fresh", "smoky", "tender"],
    "person": ["the cook", "my neighbour", "the engineer", "a student", "the gardener", "her brother", "the driver",
               "our teacher", "the baker", "a traveller", "the old fisherman", "the programmer"],
    "plant": ["roses", "beans", "tulips", "potatoes", "ivy", "lettuce", "sunflowers", "herbs", "pumpkins", "ferns"],
    "instrument": ["piano", "violin", "drum", "flute", "guitar", "cello", "trumpet", "harp"],
    "number": ["two", "three", "four", "eight", "sixteen", "thirty two", "sixty four", "one hundred and twenty eight"],
    "adverb": ["slowly", "quickly", "carefully", "quietly", "twice", "again", "gently", "often", "rarely", "always"],
    "connective": ["because", "although", "while", "so", "but", "and then", "until", "since"],
}

TEMPLATES = [
    "The {kernel_adj} {kernel_noun} {kernel_verb} each {tensor_noun} {adverb}.",
    "Every {kernel_noun} {kernel_verb} {number} {tensor_noun}s before the {kernel_noun} {kernel_verb} the rest.",
    "When the {tensor_noun} is {kernel_adj}, the {kernel_noun} {kernel_verb} it in {number} steps.",
    "A {kernel_adj} {kernel_noun} is {kernel_adj2} {connective} it {kernel_verb} the {tensor_noun} {adverb}.",
    "The {weather_noun} {weather_verb} over {place} {time}.",
    "{time_cap}, the {weather_noun} {weather_verb} {adverb} and {place} is quiet.",
    "{person_cap} says the {weather_noun} will {weather_verb_base} {time}.",
    "If the {weather_noun} {weather_verb} {time}, {person} stays near {place}.",
    "{cook_verb_cap} the {food} {adverb}, then add the {food2} and {cook_verb} again.",
    "{person_cap} likes {cook_adj} {food} with {cook_adj2} {food2}.",
    "The {food} should be {cook_adj} {connective} the {food2} are {cook_adj2}.",
    "To make {cook_adj} {food}, {cook_verb} {number} handfuls of {food2} {adverb}.",
    "{person_cap} plants {plant} near {place} {time}.",
    "The {plant} grow {adverb} {connective} the {weather_noun} {weather_verb}.",
    "{person_cap} plays the {instrument} {adverb} {time}.",
    "At {place_plain}, {person} heard a {instrument} {connective} the {weather_noun} {weather_verb}.",
    "{person_cap} asked how the {kernel_noun} {kernel_verb} the {tensor_noun}, and {person2} explained it {adverb}.",
    "We measured the {kernel_noun} {number} times and it was {kernel_adj} every time.",
    "The train to {place_plain} leaves {time}, {connective} the {weather_noun} {weather_verb}.",
    "{person_cap} carried {food} and {food2} from {place} to {place2}.",
]

BASE_VERB = {v: v[:-1] if not v.endswith("es") or v in {"fades", "arrives", "settles"} else v[:-2]
             for v in WORDS["weather_verb"]}


def fill(template: str, rng: random.Random) -> str:
    values: dict[str, str] = {}
    for key, options in WORDS.items():
        first, second = rng.sample(options, 2)
        values[key], values[key + "2"] = first, second
    values["time_cap"] = values["time"][0].upper() + values["time"][1:]
    values["person_cap"] = values["person"][0].upper() + values["person"][1:]
    values["cook_verb_cap"] = values["cook_verb"].capitalize()
    values["place_plain"] = values["place"].removeprefix("the ")
    values["weather_verb_base"] = BASE_VERB[values["weather_verb"]]
    return template.format(**values)


def paragraph(rng: random.Random) -> str:
    # A paragraph stays mostly on one topic block of templates, like real prose.
    start = rng.randrange(0, len(TEMPLATES), 4)
    topic = TEMPLATES[start:start + 4]
    sentences = [fill(rng.choice(topic if rng.random() < 0.8 else TEMPLATES), rng) for _ in range(rng.randint(3, 7))]
    return " ".join(sentences)


def generate(target_bytes: int = TARGET_BYTES, seed: int = SEED) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    while size < target_bytes:
        p = paragraph(rng) + "\n\n"
        parts.append(p)
        size += len(p)
    return "".join(parts)


if __name__ == "__main__":
    out = Path(__file__).with_name("train_data.txt")
    out.write_text(generate(), encoding="utf-8")
    print(f"wrote {out} ({out.stat().st_size} bytes)")
