"""About a thousand SDF files nobody here wrote (SDFormat's, Gazebo's and gz-sim's own: tests/data/sdf_corpus.tar.xz,
with their licences), each loaded and compared with libsdformat's reading of it (tests/data/sdf_corpus_reading.json.xz,
written by sdformat_reader/): link frames, joint anchors, axes and limits, each body's mass, centre and inertia.
No crash, no disagreement; every refusal for a reason docs/sdf.md gives, counted per collection."""

from __future__ import annotations

from collections import Counter

import pytest
from sdf_corpus import COMPARED, TOL, compare, extract, load, reason

import denoc_pin as dp

# per collection: files that agree with libsdformat, and the files refused per reason (docs/sdf.md, "Public files")
EXPECTED = {
    "gazebo_models": Counter({"agree": 161, "loaded; libsdformat reports an error": 10, "refused: nothing moves": 206,
                              "refused: version": 33, "refused: malformed": 23, "refused: not a tree": 10,
                              "refused: joint type": 9, "refused: include not found": 3}),
    "gz-sim": Counter({"agree": 140, "agree, each model by model_name=": 84, "loaded; libsdformat reports an error": 2,
                       "refused: include not found": 62, "refused: nothing moves": 33,
                       "refused: several models move": 20, "refused: not a tree": 20, "refused: auto inertia": 8,
                       "refused: malformed": 2,
                       "refused: joint type": 2, "refused: include option": 1}),
    "sdformat": Counter({"agree": 57, "agree, each model by model_name=": 6, "refused: not a tree": 44,
                         "refused: nothing moves": 38, "refused: malformed": 30, "refused: include not found": 17,
                         "refused: version": 9, "refused: include option": 8, "refused: several models move": 6,
                         "refused: joint type": 2, "refused: auto inertia": 1}),
}  # fmt: skip


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return extract(tmp_path_factory.mktemp("sdf_corpus"))


def _as_gazebo(path, root, **kw):
    """A model as Gazebo moves it: a model without joints floats free (``root_joint="free-flyer"``)."""
    try:
        return load(path, root, **kw)
    except dp.ModelError as e:
        if "has no movable joint" not in str(e):
            raise
        return load(path, root, root_joint="free-flyer", **kw)


def _outcome(root, rel: str, entry: dict) -> tuple[str, dict]:
    """How the file fares: agrees with libsdformat (as a user loads it: ``model_name=`` for each model that moves
    in a world of up to ten, ``root_joint="free-flyer"`` for a model whose one link floats free, as in Gazebo), is
    refused for a documented reason, or loads where libsdformat reports an error."""
    try:
        models = [load(root / rel, root)]
    except dp.ModelError as e:
        why = reason(str(e))
        assert why is not None, f"{rel}: a refusal docs/sdf.md does not give: {e}"
        moving = [m["name"] for m in entry["models"] if not m["static"]]
        try:
            if why == "several models move" and 0 < len(moving) <= 10 and not entry["errors"]:
                models = [_as_gazebo(root / rel, root, model_name=name) for name in moving]
            elif "has no movable joint" in str(e) and not entry["errors"]:
                models = [load(root / rel, root, root_joint="free-flyer")]
            else:
                return f"refused: {why}", {}
        except dp.ModelError as again:
            why = reason(str(again))
            assert why is not None, f"{rel}: a refusal docs/sdf.md does not give: {again}"
            return f"refused: {why}", {}
    worst: dict[str, float] = {}
    for model in models:
        theirs = [m for m in entry["models"] if m["name"] == model.name]
        if entry["errors"] or (theirs and theirs[0]["problem"]):
            return "loaded; libsdformat reports an error", {}
        assert theirs, f"{rel}: libsdformat reads it without error, but has no model {model.name!r}"
        errors = compare(model, theirs[0])
        assert max(errors.values()) <= TOL, f"{rel}: {model.name!r} disagrees with libsdformat: {errors}"
        worst = {k: max(v, worst.get(k, 0.0)) for k, v in errors.items()}
    return "agree" if len(models) == 1 else "agree, each model by model_name=", worst


def test_the_sdf_corpus_against_libsdformat(corpus):
    root, reading = corpus
    counts: dict[str, Counter] = {}
    worst: Counter = Counter()
    for rel in sorted(reading):
        outcome, errors = _outcome(root, rel, reading[rel])
        counts.setdefault(rel.split("/")[0], Counter())[outcome] += 1
        for key, value in errors.items():
            worst[key] = max(worst[key], value)
    assert sum(sum(c.values()) for c in counts.values()) == len(reading) > 1000
    assert counts == EXPECTED, counts
    assert 0 < max(worst.values()) <= TOL
    assert worst["collisions"] > 0 and min(COMPARED[k] for k in ("box", "sphere", "cylinder")) > 50, COMPARED
