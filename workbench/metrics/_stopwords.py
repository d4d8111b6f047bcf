"""English function words dropped by the content-word entity extractor (private).

Written for this project: closed-class words (articles, pronouns, prepositions,
conjunctions, auxiliaries, common adverbs and quantifiers) plus a few discourse words
that are never entities. Lower-case; the regex tokenizer splits ``don't`` into ``don``
and ``t``, so the fragments are listed too.
"""

from __future__ import annotations

ENGLISH_STOP_WORDS = frozenset(
    """
    a about above across after afterwards again against all almost alone along already
    also although always am among amongst an and another any anyhow anyone anything
    anyway anywhere are around as at be became because become becomes becoming been
    before beforehand behind being below beside besides between beyond both but by can
    cannot could did do does doing done down due during each eg either else elsewhere
    enough especially etc even ever every everyone everything everywhere except few for
    former formerly from further furthermore had has have having he hence her here
    hereby herein hers herself him himself his how however i ie if in including indeed
    instead into is it its itself just least less like likely many may maybe me meanwhile
    might mine more moreover most mostly much must my myself namely neither never
    nevertheless next no nobody none nor not nothing now nowhere of off often on once one
    only onto or other others otherwise our ours ourselves out over own per perhaps
    please quite rather really same several shall she should since so some somehow
    someone something sometimes somewhat somewhere still such than that the their
    theirs them themselves then thence there thereafter thereby therefore therein
    thereupon these they this those though through throughout thus to together too
    toward towards under unless until up upon us usually very via was we well were what
    whatever when whenever where whereas wherever whether which while who whoever whole
    whom whose why will with within without would yet you your yours yourself yourselves
    s t d ll m re ve don doesn didn isn aren wasn weren hasn haven hadn won wouldn
    shouldn couldn
    """.split()
)
