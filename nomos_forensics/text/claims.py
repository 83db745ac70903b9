"""The capability-claim reading (issue 31 kept it beside the refusal model): first-person
phrases in which an agent says it lacks the means to act ("I can't run commands from here",
"Since I can't actually run the build, I'll assume it passes", "no puedo ejecutar", "我无法执行"),
with the classes that are not one (waiting for the user's files, statements about code, the
client's edit format, a policy cited, a condition, a question). Tuned on coding and ops agents'
sessions, where the refusal model, trained on whole replies that decline, reads such a claim in
passing as an answer: on the 582 sessions of the first real corpus it finds 41 of 42 labelled
claims at precision 1.00. `rulekit.refusals` asks it about the replies the model did not read as
declining, or read as declining for no reason; cant-run asks it about messages that call a tool.
"""

from __future__ import annotations

import functools
import re

from . import lexicon
from .prefilter import AnyPattern, LazyPattern, any_token, letter_first, required_words
from .prose import canonical, statements


def _verbs(*words: str) -> str:
    """An alternation of action verbs with their -s/-ing/-ed forms (for "incapable of executing")."""
    forms = set()
    for word in words:
        forms.add(word)
        if " " in word:
            continue
        stem = word[:-1] if word.endswith("e") and not word.endswith("ee") else word
        if re.fullmatch(r"(?:run|stop|ssh|shut|set|get)", word):
            stem = word + word[-1]
        forms.update({stem + "ing", word + "s", word + "es", stem + "ed"})
    return "(?:" + "|".join(sorted(forms, key=len, reverse=True)) + r")\b"


# Acting on a system. Not: find, see, tell, confirm, guarantee, promise, recommend, stress, wait,
# say, think, rule out, reproduce, determine, explain — "I can't find X" is a result, not a claim.
_ACTION = _verbs(
    "run", "rerun", "re-run", "execute", "exec", "perform", "access", "ssh", "connect", "reach",
    "log in", "log into", "login", "sign in", "restart", "start", "stop", "reboot", "reload",
    "install", "uninstall", "modify", "change", "edit", "write", "delete", "remove", "create",
    "deploy", "carry out", "invoke", "call", "use", "interact", "control", "manage", "touch",
    "apply", "check", "query", "fetch", "retrieve", "open", "read", "mount", "unmount", "kill",
    "update", "upgrade", "configure", "provision", "spin up", "shut down", "trigger", "issue",
    "send", "operate", "administer", "get into", "enter", "inspect", "renew", "patch", "clear",
    "clean", "wipe", "purge", "rotate", "resize", "scale", "migrate", "back up", "restore",
    "schedule", "enable", "disable", "fix", "repair", "launch", "terminate", "test", "browse",
    "list", "view", "monitor", "make changes", "make any changes", "push", "pull", "copy", "move",
    "upload", "download", "set up", "take", "interface",
) + r"|do (?:that|this|it|so|anything|any of (?:that|this|these|those))\b|help (?:you )?with (?:that|this|it|your)\b" \
    r"|assist (?:you )?with (?:that|this|it|your)\b|help (?:you )?(?:here|there)\b|help\s*$|assist\s*$|do\s*$"
# Words that may stand between the inability and the verb ("I can't directly run …").
_FILLER = (
    r"(?:\s+(?:directly|actually|really|currently|physically|personally|myself|remotely|simply|just|"
    r"also|even|still|yet|safely|reliably|manually|interactively|technically|literally|possibly|"
    r"from here|for you|on your behalf|by myself|on my own|go ahead and|help you|be used to|"
    r"execute or|run or|access or|access and|and|or|any|the))*"
)
_SUBJECT = r"(?<![\w'-])(?:i|we)"
_ADVERBS = r"(?:\s+(?:still|currently|actually|really|unfortunately|simply|just|also|now|honestly|sadly|presently|really|truly|right now|at the moment|at this time|at present|personally|myself|do|genuinely))*"
# "can't", "'m unable to", "won't be able to", "'m not allowed to", "'m incapable of" …
_INABLE = (
    r"(?:\s*can't|\s+can no longer|\s+won't be able to|'ll not be able to|\s+will never be able to|"
    r"(?:'m|'re)(?:\s+(?:currently|still|presently|now|also|simply|just|really|actually|afraid|sadly))*\s+(?:not\s+(?:currently\s+|really\s+|actually\s+|presently\s+|yet\s+|always\s+)?|no\s+longer\s+)?(?:un)?able\s+to|"
    r"(?:'m|'re)\s+not\s+(?:allowed|permitted|authori[sz]ed|equipped|set\s+up|configured|designed|built|"
    r"meant|supposed|in\s+a\s+position|capable\s+enough)\s+to|"
    r"(?:'m|'re)\s+(?:not\s+capable\s+of|incapable\s+of|restricted\s+from|prevented\s+from|blocked\s+from|"
    r"prohibited\s+from|forbidden\s+from|barred\s+from|not\s+able\s+to))"
)
# The have-forms: "don't have the ability/access", "have no way", "lack the permissions" …
_CAPABILITY_NOUN = (
    r"(?:ability|abilities|capability|capabilities|access|permission|permissions|privilege|privileges|"
    r"rights|means|way|ways|tool|tools|toolset|option|shell|terminal|console|connectivity|connection|"
    r"control|authority|clearance|interface|function|functionality|integration|sudo|root|ssh|"
    r"network|mechanism|method|capacity|power|action|actions|login|account|tooling|toolkit|facility|facilities|"
    r"resources|credentials|visibility)\b"
)
_MODIFIERS = r"(?:\s+(?:that|this|those|these|such))?(?:\s+(?!about\b|with\b|for\b|on\b|to\b|but\b|and\b|of\b|in\b|if\b|that\b|because\b)[\w'-]+){0,3}?"
_HAVE_NOT = (
    r"(?:\s+(?:don't|doesn't)\s+(?:currently\s+|actually\s+|really\s+|yet\s+)?(?:have|possess|get)|"
    r"'ve\s+(?:no|not\s+got|got\s+no)|\s+(?:have|possess|got)\s+no|\s+haven't\s+got|\s+no\s+longer\s+have|"
    r"\s+(?:lack|am\s+lacking|'m\s+lacking)|'ve\s+not\s+been\s+(?:given|granted)|\s+(?:haven't|were\s+never|was\s+never)\s+been\s+(?:given|granted))"
)
# First-person claims share their subject: one prefix, then the alternatives.
_NEGATION = LazyPattern(
    rf"{_SUBJECT}(?:"
    rf"{_ADVERBS}{_INABLE}{_FILLER}\s+(?:{_ACTION})"
    rf"|{_ADVERBS}{_INABLE}{_FILLER}\s+(?:get|obtain|have|gain|acquire|open|spawn|establish)\s+(?:a\s+|an\s+|any\s+|the\s+)?(?:\w+\s+)?{_CAPABILITY_NOUN}"
    # elliptical: "I can't, sorry." "Unfortunately I'm unable to."
    rf"|{_ADVERBS}(?:\s*can't|(?:'m|'re)\s+(?:not\s+able|unable)(?:\s+to)?)\s*(?:[,.!;]|$)"
    # "I can only suggest commands", "I'm only able to advise"
    rf"|(?:\s+can\s+only|(?:'m|'re)\s+only\s+(?:able|allowed|permitted)\s+to|(?:'m|'re)\s+limited\s+to)\s+(?:suggest|advise|explain|describe|recommend|provide|give|guide|walk|offer|tell|answer|draft|share|show\s+you|help\s+you\s+(?:write|plan|understand)|read|view|list)\w*"
    # "I'd need shell access to do that"
    rf"|(?:'d|\s+would)\s+need\s+(?:\w+\s+){{0,2}}?(?:access|permissions?|privileges|credentials|a\s+shell|shell|root|sudo)\b"
    rf"|{_ADVERBS}{_HAVE_NOT}{_MODIFIERS}\s+{_CAPABILITY_NOUN}"
    rf"|(?:'m|'re)\s+(?:not|no\s+longer)\s+(?:connected|logged\s+in|authenticated)\s+to\b"
    rf"|(?:'m|'re)\s+not\s+(?:equipped|provided|set\s+up|configured)\s+with\b"
    # "I'm an AI model with no access to your servers"
    rf"|(?:'m|'re)\b[^.;]{{0,50}}?\b(?:with\s+no\s+|without\s+(?:any\s+)?)(?:direct\s+|shell\s+|network\s+)?(?:access|ability|way|permissions?|shell|means|capability)\b"
    rf"|(?:'m|'re)\s+(?:running\s+)?(?:in\s+a\s+)?(?:sandbox(?:ed)?|isolated|air-gapped)\b"
    rf"|(?:'m|'re|\s+am|\s+are)\s+(?:only\s+)?limited\s+to\s+(?:read|read-only|viewing|listing|suggest|advice|advis|text|giving|providing|answering|explain)"
    rf"|(?:\s+only\s+have|'ve\s+only|\s+have\s+only)\s+(?:got\s+)?(?:read-only|read|view|viewer|limited|list|listing)\b"
    # "I only have list_lxcs available, which can't restart anything"
    rf"|(?:\s+only\s+have|'ve\s+only\s+got|\s+have\s+only)\b[^.;]{{1,50}}?\b(?:which|that|and\s+it|but\s+it|and\s+that)\s+(?:can't|doesn't\s+let\s+me|isn't\s+able\s+to|won't\s+let\s+me)\s+(?:{_ACTION})"
    # "I'm only a language model and don't have access …": the inability after a conjunction
    rf"|\b[^.;:!?]{{0,80}}?\b(?:and|so|therefore|thus|hence)\s+(?:i\s+)?(?:can't|can\s+no\s+longer|(?:don't|doesn't)\s+have|have\s+no|lack){_FILLER}{_MODIFIERS}\s+(?:{_ACTION}|{_CAPABILITY_NOUN})"
    rf")"
    # "… shell access, which I don't have", "root privileges that I lack"
    rf"|\b{_CAPABILITY_NOUN}[^.;]{{0,30}}?\b(?:(?:which|that)\s+)?(?:i|we)\s+(?:(?:currently\s+)?(?:don't|doesn't)\s+(?:have|possess)|lack|haven't\s+got|no\s+longer\s+have)\b"
    # "this environment doesn't give me access", "my role prevents me from restarting"
    rf"|\b(?:doesn't|don't|won't|isn't\s+going\s+to|can't)\s+(?:give|grant|allow|let|permit|provide|offer)\s+(?:me|us)\b(?:\s+[\w'-]+){{0,3}}?\s+(?:{_ACTION}|{_CAPABILITY_NOUN})"
    rf"|(?<!nothing\s)(?<!nobody\s)(?<!no\sone\s)\b(?:prevents?|stops?|keeps?|blocks?|bars?|restricts?|prohibits?)\s+(?:me|us)\s+from\s+(?:{_ACTION})"
    rf"|\bmy\s+(?:access|permissions|role|privileges|rights|capabilities)\s+(?:is|are)\s+(?:limited|restricted)\s+to\b"
    rf"|\bthere's\s+nothing\s+(?:that\s+)?(?:i|we)\s+can\s+do\b"
    # after an apology, without a subject: "Sorry - unable to execute commands …"
    rf"|^(?:unfortunately|sorry|apologies|sadly|regrettably|i'm\s+sorry|i'm\s+afraid|afraid)\b[,\s\-—–:]*(?:but\s+)?(?:i'm\s+|currently\s+)?(?:unable|not\s+able|can't)\s+to?{_FILLER}\s*(?:{_ACTION})"
)
# Impersonal claims, each behind a word it cannot match without (cheap `in` tests first).
_NO_CAPABILITY: tuple[tuple[tuple[str, ...], LazyPattern], ...] = tuple(
    (gate, LazyPattern(pattern))
    for gate, pattern in (
        (("there",),
         r"\bthere(?:'s|\s+are)\s+no\s+(?:\w+\s+){0,2}(?:tool|action|function|capability|command|mechanism|endpoint|option|integration)s?\b"
         r"\s+(?:\w+\s+){0,2}?(?:available|i\s+can|i\s+could|for\s+me|in\s+my|at\s+my|that\s+(?:lets|allows|would\s+let)\s+me)"
         # the runbook's "there is no action for that": tools and actions, not options or mechanisms
         r"|\bthere(?:'s|\s+are)\s+no\s+(?:\w+\s+)?(?:tool|action|function|capability)s?\s+(?:to|for)\b"
         r"|\bthere(?:\s+isn't|\s+aren't|'s\s+not)\s+(?:an?|any)\s+(?:\w+\s+){0,2}(?:tool|action|function|capability|command|mechanism|endpoint|option|integration)s?\b"
         r"(?:\s+(?:\w+\s+){0,2}?(?:available|i\s+can|i\s+could|for\s+me|in\s+my|at\s+my)|\s+(?:to|for)\b)"
         r"|\bthere's\s+no\s+(?:way|means|mechanism)\s+for\s+me\b"),
        (("no ",),
         r"\bno\s+(?:\w+\s+)?(?:tool|action|function|capability)\s+(?:is\s+)?(?:available|exists)\s+(?:to|for)\b"),
        (("n't", "not "),
         r"\b(?:that|this|the\s+requested|the\s+requested\s+\w+)\s+(?:action|operation|command|capability|request)\s+(?:isn't|aren't)\s+"
         r"(?:supported|available|possible|something\s+i\s+can\s+do)"
         r"|\b(?:isn't|aren't|not)\s+(?:supported|available)\s+(?:by|with|in|to)\s+(?:me|the\s+tools\s+i|my\s+(?:tools|toolset|actions|environment))"
         r"|\b(?:the\s+)?\w+\s+(?:action|tool|function|command)\s+(?:isn't|is\s+not|is\s+no\s+longer|aren't)\s+available\s+(?:to\s+me|here|in\s+this\s+session)"
         r"|\b(?:isn't|aren't|not)\s+(?:with)?in\s+my\s+(?:current\s+)?(?:capabilities|abilities|ability|scope|permissions|reach|toolset|power|access|remit)"
         r"|(?:\bnot|n't)\s+(?:in|part\s+of|among)\s+my\s+(?:available\s+)?(?:toolset|tools|action\s+list|actions|capabilities)"
         r"|\b(?:isn't|aren't|not)\s+(?:something|anything)\s+(?:that\s+)?(?:i|we)(?:'m|'re|\s+am|\s+are)?\s+"
         r"(?:can|could|able\s+to|have\s+the\s+(?:ability|capability|access|permissions?)|am\s+able\s+to|allowed\s+to|permitted\s+to|equipped\s+to|have\s+access\s+to)\b"),
        (("outside", "beyond", "exceed"),
         r"\b(?:outside|beyond)\s+(?:of\s+)?(?:what|anything)\s+(?:i|we)(?:'m|\s+am|'re|\s+are)?\s+(?:can|could|am\s+able|able|allowed|permitted|have\s+access)"
         r"|\b(?:outside|beyond|exceeds?)\s+(?:of\s+)?(?:my|the)\s+(?:current\s+)?(?:capabilities|abilities|ability|scope|permissions|reach|toolset|access|remit|control|powers?)"),
        (("my ",),
         r"\bmy\s+(?:available\s+|current\s+)?(?:tools|toolset|permissions|access|privileges|role|account|environment|sandbox|setup|configuration|capabilities)\s+"
         r"(?:doesn't|don't|won't|can't|isn't)\s+(?:allow|permit|let|give|grant|include|support|provide|extend|cover|enable)"),
        (("tool", "none of"),
         r"\b(?:the\s+)?tools?\s+(?:i\s+have|available\s+to\s+me|i've\s+got|i\s+have\s+access\s+to|at\s+my\s+disposal|i\s+can\s+use)\s+"
         r"(?:don't|doesn't|can't|won't)\s+(?:include|support|allow|let|provide|do|cover|offer)"
         r"|\bnone\s+of\s+(?:my|the)\s+(?:available\s+)?(?:tools|actions|functions)(?:\s+(?:available\s+to\s+me|i\s+have(?:\s+access\s+to)?))?\s+(?:can|could|allows?|lets?|supports?|will)\b"),
        (("for me",),
         r"\b(?:it's|that's|this\s+is|it\s+is|is)\s+not\s+possible\s+for\s+me\b|\b(?:isn't|not|impossible)\s+(?:possible\s+)?for\s+me\s+to\b"),
        (("possible",),
         r"\b(?:that's|it's|this\s+is)\s+not\s+possible\s+(?:from\s+here|in\s+this\s+(?:environment|session|chat))"),
        (("as a",),
         r"\b(?:as\s+(?:an?\s+)?(?:ai|language\s+model|text-based|llm|virtual\s+assistant|assistant))\b[^.]{0,60}\b(?:can't|unable|not\s+able|don't\s+have|do\s+not\s+have|no\s+(?:access|ability|way))\b"),
        (("i'm just", "i'm only", "i'm merely", "i'm simply"),
         r"\bi'm\s+(?:just|only|merely|simply)\s+(?:an?\s+)?(?:large\s+)?(?:ai|language\s+model|text-based|chat\s*bot|llm|virtual\s+assistant)\b[^.]{0,80}\b(?:can't|unable|not\s+able|don't\s+have|no\s+(?:access|ability|way))\b"),
    )
)


def _no_capability(plain: str) -> bool:
    return any(any(map(plain.__contains__, gate)) and pattern.search(plain) for gate, pattern in _NO_CAPABILITY)
_OTHER_LANGUAGES = LazyPattern(
    # Spanish, Portuguese, French, Italian: "can't" followed by anything but a finding verb
    r"\bno\s+(?:puedo|podemos|soy\s+capaz\s+de|estoy\s+en\s+condiciones\s+de|me\s+es\s+posible)\s+(?!encontrar|ver|confirmar|garantizar|decir|creer|esperar|asegurar|recomendar)"
    r"|\bno\s+(?:tengo|tenemos|dispongo\s+de)\s+(?:acceso|permisos?|la\s+capacidad|capacidad|forma|manera|herramientas?)"
    r"|\bn[ãa]o\s+(?:consigo|posso|podemos|sou\s+capaz\s+de)\s+(?!encontrar|ver|confirmar|garantir|dizer|acreditar|esperar)"
    r"|\bn[ãa]o\s+(?:tenho|temos)\s+(?:acesso|permiss[ãa]o|permiss[õo]es|como|a\s+capacidade|ferramentas?)"
    r"|\bje\s+ne\s+(?:peux|pourrai|suis\s+pas\s+(?:en\s+mesure|capable|autoris[ée])|dispose\s+pas)\b(?!\s+pas\s+(?:trouver|voir|confirmer|garantir|dire|croire))"
    r"|\bje\s+n'ai\s+(?:pas|aucun)\s+(?:d'|de\s+|l'|les\s+|la\s+)?(?:acc[eè]s|possibilit[ée]|droits?|permissions?|moyen|outils?)"
    r"|\bimpossible\s+pour\s+moi\b"
    r"|\bnon\s+(?:posso|possiamo|sono\s+in\s+grado\s+di|riesco\s+ad?)\s+(?!trovare|vedere|confermare|garantire|dire|credere)"
    r"|\bnon\s+(?:ho|abbiamo)\s+(?:accesso|i\s+permessi|il\s+permesso|la\s+possibilit[àa]|modo|strumenti)"
    # German (either word order), Dutch
    r"|\b(?:ich\s+(?:kann|darf)|(?:kann|darf)\s+ich)\b[^.]{0,60}\b(?:nicht|keine?n?)\b[^.]{0,60}\b(?:aus(?:zu)?f[üu]hren|(?:neu\s+)?starten|zugreifen|durchf[üu]hren|[äa]ndern|verbinden|erreichen|installieren|l[öo]schen|einloggen|anmelden|bearbeiten|stoppen)"
    r"|\b(?:ich\s+habe|habe\s+ich)\s+(?:leider\s+|derzeit\s+|aktuell\s+)?(?:keinen|keine)\s+(?:zugriff|zugang|berechtigung|berechtigungen|rechte|m[öo]glichkeit|werkzeuge?)"
    r"|\b(?:ik\s+kan|kan\s+ik)\b[^.]{0,40}\b(?:geen|niet)\b[^.]{0,60}\b(?!vinden\b|zien\b|zeggen\b|garanderen\b|bevestigen\b|beloven\b)\w+en\b"
    r"|\bik\s+heb\s+(?:helaas\s+)?geen\s+(?:toegang|rechten|toestemming|mogelijkheid)"
    # Polish, Russian, Ukrainian, Turkish
    r"|\bnie\s+(?:mog[ęe]|jestem\s+w\s+stanie|mam\s+(?:dost[ęe]pu|uprawnie[ńn]|mo[żz]liwo[śs]ci))"
    r"|(?:\bя\s+)?\bне\s+(?:могу|можу|имею\s+(?:возможности|доступа)|маю\s+(?:доступу|можливості)|в\s+состоянии|удается)\b"
    r"|\bу\s+(?:меня|мене)\s+нет?\s+(?:доступа|доступу|возможности|можливості|прав)"
    r"|\b(?:eri[şs]imim|yetkim|iznim)\s+(?:yok|bulunmuyor)|\b(?:[çc]al[ıi][şs]t[ıi]r|eri[şs]|ba[ğg]lan|ba[şs]lat|ger[çc]ekle[şs]tir|yap|y[üu]r[üu]t|sil|de[ğg]i[şs]tir)[ae]m(?:[ıi]yorum|am|em|ıyoruz|iyoruz)\b"
    # Chinese, Japanese, Korean
    # Chinese: the speaker, or no subject, before the inability ("我无法执行", "抱歉，目前无法访问");
    # not a thing ("小程序无法连接到服务器": the mini program cannot connect)
    r"|(?:^|(?<=[我们您你，,。.！!：:；;\s]))(?:这边|这里|暂时|目前|现在|还|也|都|仍|仍然|确实|实在|恐怕|可能|真的)?"
    r"(?:无法|不能|没办法|没有办法|不可以|無法)(?:直接|帮您|为您|替您)?(?:执行|運行|运行|访问|訪問|存取|操作|重启|重啟|连接|連接|登录|登入|修改|删除|安装|完成|处理|處理)"
    r"|没有(?:权限|访问权限|执行权限|能力|办法)|沒有(?:權限|存取權限)"
    r"|(?:実行|アクセス|操作|再起動|接続|ログイン|変更|削除|インストール)(?:すること)?(?:が|は)?でき(?:ません|ない)"
    r"|(?:실행|접근|액세스|재시작|연결|접속|수정|삭제|설치)\S{0,3}\s*(?:할\s*수|수)\s*없",
)


@functools.cache
def _other_languages() -> AnyPattern:
    """_OTHER_LANGUAGES as a yes/no test, each alternative tried only where its words are (3.7x
    faster on real replies: the pattern starts with no literal, so the engine tried every branch
    at every position). Built on first use: its 96 patterns cost start-up otherwise."""
    return AnyPattern(_OTHER_LANGUAGES)


# Not a capability claim: gated on approval, conditional, parallelism, or a question.
_GATED = re.compile(
    r"\b(?:until|unless|once|before|without|as\s+soon\s+as|pending|awaiting|waiting\s+for|after)\b[^.]{0,60}"
    r"\b(?:approv\w*|confirm\w*|permission|consent|go-ahead|go\s+ahead|sign-?off|authori[sz]ation|you\s+say|ok\b|okay)"
    r"|\b(?:needs?|requires?|need)\s+(?:your\s+|an?\s+|explicit\s+)?(?:approval|confirmation|sign-?off|go-ahead)",
)
_CONDITIONAL = re.compile(
    r"^(?:if|whether|even\s+if|in\s+case|should\s+i|unless|when(?:ever)?|in\s+the\s+event)\b|\b(?:if|when|whether|in\s+case)\s+(?:i|we)\s+(?:can't|cannot|can\s+not|am\s+unable|'m\s+unable|don't\s+have)",
    re.I,
)
_PARALLEL = re.compile(r"\b(?:at\s+the\s+same\s+time|simultaneously|in\s+parallel|concurrently|at\s+once|both\s+at)\b")
# cheap pre-filters (on lower-case text): without one of these, no English pattern can match
_CUE_WORDS = frozenset(
    """no not none nothing never unable incapable lack lacks lacking beyond outside impossible only
    restricted restrict restricts restricting limited sandbox sandboxed isolated air-gapped prevents
    prevent need cannot cant dont interactive auto-deny""".split()
)
_CUE_PARTS = ("n't", "n’t", "as a", "i'm just", "i'm merely", "i'm simply", "i’m just", "i’m merely", "i’m simply", "nothing")
_CUE_TOKEN = any_token(_CUE_WORDS)  # one of the cue words as a whole [a-z'-]+ token


def _english_cue(lower: str) -> bool:
    return any(map(lower.__contains__, _CUE_PARTS)) or _CUE_TOKEN.search(lower) is not None


OTHER_CUE = (
    r"\bno (?:p|t|s|e|m|d)|\bn[ãa]o\b|\bje\b|\bnon\b|\bich\b|\bhabe\b|\bkann\b|\bdarf\b|\bik\b|\bkan\b|\bnie\b|\bimpossible pour|"
    r"\bne\b|\bnicht\b|\bkein|\bgeen\b|\bniet\b|\btidak\b|\btak\b"
)
_OTHER_CUE = letter_first(OTHER_CUE)  # the same texts, found about 2.5x faster


def worth_reading(text: str) -> bool:
    """Could any sentence of `text` be a claim? (Most messages are ruled out here, unsplit.)"""
    if not text.isascii():
        return True
    lower = text.lower()
    return _english_cue(lower) or bool(_OTHER_CUE.search(lower))


def _source(name: str, key: str) -> str:
    data = lexicon.load("nomos_forensics.text", name)
    return lexicon.pattern(data["patterns"], key, data.get("macros", {}))


def _table(name: str, key: str) -> LazyPattern:
    """A lexicon table's pattern, compiled when first used (start-up: most runs need few)."""
    return LazyPattern(_source(name, key))


# lexicons/capability_claims.toml: more claims, what is not one, what a claim names as missing
_MORE_CLAIMS = _table("capability_claims", "claims")
_CLAIMS_ID = _table("capability_claims", "claims_id")
_NOT_A_CLAIM = LazyPattern("|".join(_source("capability_claims", key)
                                   for key in ("waiting", "code", "format", "scope", "state")))
_INSTRUCTIONS = _table("capability_claims", "instructions")
_MISSING = _table("capability_claims", "missing")
# words one of which every _MISSING match holds (required_words): most statements hold none
_MISSING_GATE = required_words(_MISSING)


def _names_missing(plain: str) -> bool:
    return (_MISSING_GATE is None or any(map(plain.__contains__, _MISSING_GATE))) and _MISSING.search(plain) is not None


MISSING_WORDS = tuple(lexicon.words(lexicon.load("nomos_forensics.text", "capability_claims")["words"]["missing"]))
# lexicons/policy_claims.toml: a claim that cites a policy, rule or terms is a policy refusal
_REFUSAL = lexicon.load("nomos_forensics.text", "policy_claims")["patterns"]
_POLICY = LazyPattern("|".join(
    [_source("policy_claims", key) for key in _REFUSAL if key.startswith("refusal_")]
    # a decline and a cited rule of the same language, anywhere in the statement
    + [f"^(?=.*?(?:{_source('policy_claims', key)}))(?=.*?(?:{_source('policy_claims', 'reason_' + key[8:])}))"
       for key in _REFUSAL if key.startswith("decline_")]), re.S)
_POLICY_LEAD = LazyPattern("|".join(_source("policy_claims", key) for key in _REFUSAL if key.startswith("lead_")))


def claim_in(plain: str) -> bool:
    """Does this statement (see `rulekit.statements`) claim the agent cannot run/execute/access something?"""
    english = _english_cue(plain)
    other = not plain.isascii() or _OTHER_CUE.search(plain)
    if not (english or other) or _CONDITIONAL.search(plain):
        return False
    hit = (english and (_NEGATION.search(plain) or _no_capability(plain) or _MORE_CLAIMS.search(plain))) or (
        other and (_other_languages().matches(plain) or _CLAIMS_ID.search(plain))
    )
    if not hit:
        return False
    return not (_GATED.search(plain) or _PARALLEL.search(plain) or _NOT_A_CLAIM.search(plain)
                or _POLICY.search(plain))


def first_claim(text: str, missing_only: bool = False, accept=None) -> str | None:
    """The first claim of `text`; with `missing_only`, only one that names what is missing
    (a message that goes on to call a tool still works: it counts only when it names the gap);
    with `accept`, only one for which accept(sentence) holds.
    A claim whose next statement cites a policy is policy-refusal's, not this rule's; one right
    after the agent cites its own instructions ("my system instructions require me to …") is the
    model's configuration, not a missing capability."""
    said = list(statements(text))
    for i, (sentence, plain) in enumerate(said):
        # the cheap test first: most statements of a message that acts name nothing missing
        if (not missing_only or _names_missing(plain)) and claim_in(plain):
            if i + 1 < len(said) and (_POLICY_LEAD.search(said[i + 1][1]) or _POLICY.search(said[i + 1][1])):
                continue
            if i and _INSTRUCTIONS.search(said[i - 1][1]):  # the model citing its instructions
                continue
            if _HEDGED.search(plain):  # "I can't change the signature easily": effort, not means
                continue
            if accept is not None and not accept(sentence):
                continue
            return sentence
    return None


_HEDGED = _table("capability_claims", "hedged")
_MEANING = _table("capability_claims", "meaning")


def asks_meaning(sentence: str) -> bool:
    """The sentence says the agent does not know what the user means: a request to clarify, no
    missing knowledge ("I don't know what you mean", "não sei o que o senhor quer dizer")."""
    return _MEANING.search(canonical(sentence)) is not None


def acting_claim(text: str) -> str | None:
    """In a message that calls a tool (the agent goes on working), the first claim that names
    what is missing ("I can't run pylint because it's not installed"), or None."""
    lowered = text.lower()
    if not any(map(lowered.__contains__, MISSING_WORDS)) or not worth_reading(text):
        return None
    return first_claim(text, missing_only=True)


_SUDO_WORDS = ("sudo", "root", "admin", "elevated", "superuser", "privileged")
_TERMINAL_WORDS = ("terminal", "tty", "pty", "password", "passphrase", "pin", "prompt", "auth")


def may_claim(text: str) -> bool:
    """Whether a reply holds the words a terminal, sudo, auto-deny or own-session claim cannot do
    without (they hold no cue word of text.refusal's gate, which covers the other claims)."""
    lowered = text.lower()
    if "auto-deny" in lowered or "myself" in lowered or "my own" in lowered or "tidak" in lowered or "tak " in lowered:
        return True
    return ("requir" in lowered or "need" in lowered) and any(w in lowered for w in _SUDO_WORDS + _TERMINAL_WORDS)


# what reads as a decline but is not a capability claim (each a class seen in real sessions:
# waiting for the user's files, a statement about code, the client's edit format, the agent's
# state, the task's scope, its instructions, a judgement of effort)
_NOT = LazyPattern("|".join(_source("capability_claims", key)
                        for key in ("waiting", "code", "format", "state", "scope", "instructions", "hedged")))


def not_a_claim(text: str, sentence: str) -> bool:
    """Whether `sentence` (the one a cant-run decision rests on) waits on an approval or is a
    condition, or it or another sentence of `text` that declines or says what the agent lacks is
    of a class that is not a capability claim."""
    from .refusal import cue_tables

    for said, plain in statements(text):
        if said == sentence and (_GATED.search(plain) or _CONDITIONAL.search(plain)):
            return True  # "I can't run it until you confirm", "if I can't reach pve2, …"
        if (said == sentence or {"inability", "inability_self", "lacking"} & set(cue_tables(said))) and _NOT.search(plain):
            return True
    return False
