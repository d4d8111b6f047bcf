"""The live active-labelling queue over the label store: which item next, and the answer so far.

**Each label goes to an item its annotator has not labelled.** A draw is made among the
pool's items the annotator has not labelled yet (in this study and kind), with the sampler's
probabilities renormalised over them; that renormalised probability is the one stored with
the label. The estimate stays unbiased for that design by letting the annotator's earlier
labels stand in for their own items (des Raj's estimator for draws without replacement):
label ``t``'s term is ``Z_t = lam Fbar + c + (sum_{j in D} e_j + e_I / q_left(I)) / N``
(:meth:`ActiveSampler.update`), whose conditional mean given the past is
``(sum_{j in D} y_j + sum_{i not in D} E[Y_i]) / N``. It equals ``theta`` when a person's
label of an item is a fixed value (what they would say if asked again: the finite-pool
view of Zrnic & Candès 2024, where sampling is the only randomness), so the ``Z_t`` stay
martingale differences around ``theta``, what the confidence sequence needs (Waudby-Smith
et al. 2024, Theorem 2.2); when labels are noisy
draws, it adds the mean-zero noise of the ``|D|`` earlier labels, weighted ``1 / N``, a
term that vanishes while ``|D|`` is small against ``N``. A repeat is never asked; a
design that wants one on purpose (a second look by the same person) draws it with
:class:`ActiveSampler` itself and says so.

**Fresh and reproducible randomness.** Draw ``k`` of a session takes its uniform number
from a generator seeded by ``(seed, annotator, session, k)``: the study's seed, who labels,
the writer's session (``host:pid:token``, a fresh random token per :class:`LabelStore`,
recorded in every label row) and the number of the session's earlier draws. So a
restarted kernel (a new session) or a second annotator never repeats another's draws, and
:meth:`ActiveQueue.replay` recomputes every draw from the store alone (when the queue's
store is the one the labels are written through, as :class:`LabelWidget` does with it).

Labels written before this design (stores of 2026-11) were drawn from the whole pool; a
stored draw of an item its annotator had already labelled is read that way (no
``D`` term). Corrections count with their corrected value; a probability below
``floor / N`` (the least the design can draw with) is refused.

References
----------
Zrnic, T. & Candès, E. J. (2024). Active statistical inference. *ICML 2024*. arXiv:2403.03208.
Raj, D. (1956). Some estimators in sampling with varying probabilities without
replacement. *JASA*, 51(274), 269-284.
Waudby-Smith, I., Arbour, D., Sinha, R., Kennedy, E. H. & Ramdas, A. (2024). Time-uniform
central limit theory and asymptotic confidence sequences. *Annals of Statistics*, 52(6).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from workbench.labels.active import ActiveSampler
from workbench.labels.store import COLUMNS

__all__ = ["ActiveQueue"]

_LABEL_ID, _ITEM, _ANNOTATOR, _KIND, _VALUE, _SUPERSEDES, _SESSION, _PROB = (
    COLUMNS.index(c) for c in ("label_id", "item_id", "annotator", "kind", "value",
                               "supersedes", "session", "sampling_prob"))


def _word(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def draw_number(seed: int, annotator: str, session: str, k: int) -> float:
    """The uniform number of draw ``k`` of ``session`` by ``annotator`` (reproducible)."""
    seq = np.random.SeedSequence([int(seed) % 2 ** 63, _word(annotator), _word(session), int(k)])
    return float(np.random.Generator(np.random.PCG64(seq)).random())


class ActiveQueue:
    """Active labelling through the label store: which item next, and the answer so far.

    The sampler's state is rebuilt from the store's labels before every draw (those with a
    ``sampling_prob``, in the store's order, each with its value in force after
    corrections), so a restarted kernel, or several annotators labelling from their own
    kernels on one folder, continue one valid sequence. Give ``next_item`` to
    :class:`~workbench.labels.widget.LabelWidget`. See the module for the design.

    Parameters
    ----------
    store : LabelStore
        The shared folder; best the one the labels are written through (its annotator
        and session then key the draws, and :meth:`replay` reproduces them).
    predictions, uncertainty : Series
        The judge's prediction and uncertainty per ``item_id``.
    study, kind : str
        Which labels count.
    rng : int or Generator, optional
        The study's seed (a Generator gives one integer); draws are fresh per annotator and
        session whatever it is.
    **options
        :class:`ActiveSampler` options (``alpha``, ``floor``, ``burn_in``, ``t_star``,
        ``label_range`` ...).
    """

    def __init__(self, store, predictions: pd.Series, uncertainty: pd.Series | None = None, *,
                 study: str, kind: str = "score", rng=None, **options):
        self.store, self.study, self.kind = store, study, kind
        self.ids = [str(i) for i in predictions.index]
        self.index = {item: i for i, item in enumerate(self.ids)}
        self.predictions = predictions.to_numpy(dtype=float)
        self.uncertainty = (None if uncertainty is None
                            else uncertainty.reindex(predictions.index).to_numpy(dtype=float))
        if isinstance(rng, np.random.Generator):
            rng = int(rng.integers(2 ** 63))
        self.seed = 0 if rng is None else int(rng)
        if kind == "pairwise":
            options.setdefault("label_range", (0.0, 1.0))
        self.options = options
        self.floor = float(options.get("floor", 0.2))
        self.session = store.session
        self._draws = 0
        self._kept: tuple[ActiveSampler, list] | None = None  # (sampler, the draws it saw)

    # --- the store's draws -------------------------------------------------------------

    def _rows(self) -> list[tuple]:
        return [row for row in self.store.rows(study=self.study)
                if row[_KIND] == self.kind and row[_ITEM] in self.index]

    def draws(self) -> list[dict]:
        """Every sampled label in the store, in order: ``label_id``, ``item`` (index),
        ``prob``, ``value`` (in force after corrections), ``annotator``, ``session``, ``k``
        (the session's draw number) and ``done`` (the items and in-force values the
        annotator had labelled before, or ``None`` for a draw from the whole pool)."""
        rows = self._rows()
        later = {row[_SUPERSEDES]: row for row in rows if row[_SUPERSEDES]}

        def in_force(row: tuple) -> float:
            seen = {row[_LABEL_ID]}
            while row[_LABEL_ID] in later and later[row[_LABEL_ID]][_LABEL_ID] not in seen:
                row = later[row[_LABEL_ID]]
                seen.add(row[_LABEL_ID])
            return float(row[_VALUE])

        labelled: dict[str, dict[int, tuple]] = {}
        per_session: dict[tuple[str, str], int] = {}
        out = []
        least = self.floor / len(self.ids)
        for row in rows:
            mine = labelled.setdefault(row[_ANNOTATOR], {})
            item = self.index[row[_ITEM]]
            if row[_PROB] is not None and not row[_SUPERSEDES]:
                prob = float(row[_PROB])
                if not least * (1 - 1e-9) <= prob <= 1.0:
                    raise ValueError(
                        f"label {row[_LABEL_ID]} (item {row[_ITEM]}): sampling_prob {prob:g} "
                        f"is below {least:g} (floor / N), the least this design draws with")
                key = (row[_ANNOTATOR], row[_SESSION])
                k = per_session.get(key, 0)
                per_session[key] = k + 1
                done = None
                if item not in mine:
                    done = (np.array(list(mine), dtype=int),
                            np.array([in_force(r) for r in mine.values()], dtype=float))
                out.append({"label_id": row[_LABEL_ID], "item": item, "prob": prob,
                            "value": in_force(row), "annotator": row[_ANNOTATOR],
                            "session": row[_SESSION], "k": k, "done": done})
            mine.setdefault(item, row)
        return out

    def sampler(self) -> ActiveSampler:
        """A sampler that has seen every sampled label in the store, in order.

        The sampler of the previous call is kept with the draws it saw: when the store's
        draws still begin with those (same labels, same values in force), only the new
        ones are added, else it is built anew."""
        draws = self.draws()
        keys = [(d["label_id"], d["value"], None if d["done"] is None else len(d["done"][0]))
                for d in draws]
        sampler, seen = self._kept if self._kept is not None else (None, [])
        if sampler is None or keys[:len(seen)] != seen:
            sampler, seen = ActiveSampler(self.predictions, self.uncertainty,
                                          **self.options), []
        for d in draws[len(seen):]:
            sampler.update(d["item"], d["prob"], d["value"], done=d["done"])
        self._kept = (sampler, keys)
        return sampler

    # --- the next item -----------------------------------------------------------------

    def _done(self, annotator: str) -> set[str]:
        return {row[_ITEM] for row in self._rows() if row[_ANNOTATOR] == annotator}

    def next_item(self, done: set[str] | None = None, *,
                  annotator: str | None = None) -> tuple[str, float] | None:
        """The next item to label and the probability it was drawn with, among the items
        ``annotator`` (default: the store's) has not labelled; ``done`` (what
        :class:`LabelWidget` passes: the items its annotator labelled) adds to them.
        ``None`` when the annotator has labelled every item."""
        who = annotator if annotator is not None else self.store.annotator
        done = set(done or ()) | (self._done(who) if who else set())
        exclude = np.zeros(len(self.ids), dtype=bool)
        exclude[[self.index[i] for i in done if i in self.index]] = True
        # the writer's own queue numbers its draws by its labels in the store (what
        # replay sees); a reading queue by the draws it made
        k = (sum(d["annotator"] == who and d["session"] == self.session for d in self.draws())
             if self.store.annotator else self._draws)
        picked = self.sampler().draw_one(draw_number(self.seed, who or "", self.session, k),
                                         exclude)
        if picked is None:
            return None
        self._draws += 1
        return self.ids[picked[0]], picked[1]

    def replay(self) -> pd.DataFrame:
        """Every sampled label's draw recomputed from the store: ``label_id``, ``item_id``,
        ``sampling_prob`` (stored), ``replayed_item``, ``replayed_prob`` and ``same``.
        Draws made through this design and this queue's seed reproduce exactly when the
        labels were written through the queue's store, one draw per label."""
        draws = self.draws()
        sampler = ActiveSampler(self.predictions, self.uncertainty, **self.options)
        rows = []
        for d in draws:
            exclude = np.zeros(len(self.ids), dtype=bool)
            if d["done"] is not None:
                exclude[d["done"][0]] = True
            item, prob = sampler.draw_one(draw_number(self.seed, d["annotator"], d["session"],
                                                      d["k"]), exclude) or (-1, np.nan)
            rows.append({"label_id": d["label_id"], "item_id": self.ids[d["item"]],
                         "sampling_prob": d["prob"],
                         "replayed_item": self.ids[item] if item >= 0 else None,
                         "replayed_prob": prob,
                         "same": item == d["item"] and np.isclose(prob, d["prob"], rtol=1e-9)})
            sampler.update(d["item"], d["prob"], d["value"], done=d["done"])
        return pd.DataFrame(rows, columns=["label_id", "item_id", "sampling_prob",
                                           "replayed_item", "replayed_prob", "same"])

    def interval(self) -> pd.DataFrame:
        """The answer so far (:meth:`ActiveSampler.interval`), from the store."""
        return self.sampler().interval()
