"""Vocabularies, vocabulary files, human norms and the GloVe check against its published SimLex-999 value."""

import numpy as np
import pytest

from icml26.behaviorgeo.data import CATEGORY_OF, CONCRETE_NOUNS, read_vocabulary, validate, vocabulary


def test_vocabulary_starts_with_concrete_nouns_covering_every_category():
    assert len(CONCRETE_NOUNS) == len(set(CONCRETE_NOUNS)) == 64
    assert {CATEGORY_OF[w] for w in vocabulary(8)} == set(CATEGORY_OF.values())
    big = vocabulary(90)
    assert big[:64] == CONCRETE_NOUNS and len(set(big)) == 90
    assert all(w.isalpha() and len(w) >= 3 for w in big)
    with pytest.raises(ValueError, match="at least 3"):
        vocabulary(2)


def test_read_vocabulary_validates(tmp_path):
    f = tmp_path / "v.txt"
    f.write_text("# nouns\nDog\n\ncat\nhorse\n")
    assert read_vocabulary(f) == ["dog", "cat", "horse"]
    f.write_text("dog\nice cream\ncat\n")
    with pytest.raises(ValueError, match="not a single word"):
        read_vocabulary(f)
    f.write_bytes(b"caf\xe9\ndog\n")
    with pytest.raises(ValueError, match="UTF-8"):
        read_vocabulary(f)
    f.write_text("dog\ncat\n")
    with pytest.raises(ValueError, match="at least 3"):
        read_vocabulary(f)


def test_validate_rewards_vectors_that_follow_the_ratings():
    from icml26.behaviorgeo.data import human_norms

    pairs = human_norms("wordsim353")[:60]
    assert len(pairs) == 60 and all(0 <= s <= 10 for *_, s in pairs)
    # vectors built so that cosine rises with the rating of one pair per word: a perfect score on those pairs
    rng = np.random.default_rng(0)
    vecs = {}
    for a, b, s in pairs:
        if a in vecs or b in vecs:
            continue
        u = rng.normal(size=8)
        u /= np.linalg.norm(u)
        v = rng.normal(size=8)
        v -= (v @ u) * u
        v /= np.linalg.norm(v)
        angle = np.arccos(np.clip(s / 10, -1, 1))
        vecs[a], vecs[b] = u, np.cos(angle) * u + np.sin(angle) * v
    rho, n = validate(vecs, "wordsim353")
    assert n >= 20 and rho > 0.9
    with pytest.raises(ValueError, match="norms must be"):
        validate(vecs, "men3000")


@pytest.mark.slow
def test_glove_50d_reproduces_its_published_simlex_score():
    from icml26.behaviorgeo.data import glove_vectors, human_norms

    words = sorted({w for a, b, _ in human_norms("simlex999") for w in (a, b)})
    X, missing = glove_vectors(words)
    assert not missing
    rho, n = validate(dict(zip(words, X, strict=True)), "simlex999")
    assert n == 999 and rho == pytest.approx(0.265, abs=0.005)
    _, missing = glove_vectors(["dog", "zqxjword"])
    assert missing == ["zqxjword"]
