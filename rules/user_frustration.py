"""user-frustration: the user had to correct, repeat or rebuke the agent."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from difflib import SequenceMatcher

from nomos_forensics import Finding, Rule, Severity, hookimpl
from nomos_forensics.model import Message, Session, excerpt
from nomos_forensics.prefilter import WordGates

# ---------------------------------------------------------------- correction phrases
# Matched on normalised text (NFKC, lower case, straight quotes, code and quotes removed).
# `S` anchors a phrase at the start of a sentence or clause, for phrases that are only a
# rebuke there ("you didn't restart it", not "let me know if you didn't find it").
S = r"(?:^|(?<=[.!?;:,…\n])\s*|\b(?:but|and|so|ok|okay|aber|mais|pero|mas|ma|maar|но|а)\s+)"

CORRECTIONS: dict[str, tuple[str, ...]] = {
    "en": (
        r"\bno+[,.!]*\s+(?:i|we)\s+(?:said|asked|meant|told|wanted|want|need|wrote)\b",
        (r"\bi\s+(?:already|just|literally|clearly|specifically|explicitly|definitely)\s+"
        r"(?:said|told|asked|mentioned|explained|gave|wrote|specified)\b"),
        r"\bi(?:'ve|\s+have)?\s+(?:already\s+)?told\s+you\b",
        r"\bi\s+asked\s+you\s+(?:to|for|about|not|if|whether)\b",
        r"\b(?:as|like)\s+i\s+(?:already\s+)?(?:said|told\s+you|mentioned|asked|wrote)\b",
        r"(?:\bnot|n't)\s+what\s+i\s+(?:asked|wanted|meant|said|requested|need(?:ed)?|told|was\s+asking|asked\s+for)\b",
        r"\bi\s+meant\b",
        r"\bwhy\s+(?:did|would|didn't|haven't|hasn't|won't|can't|couldn't|wouldn't|did\s+not|have|are|were)\s+you\b(?!\s+(?:think|suggest|recommend|believe|say\s+that)\b)",
        r"\bwhy\s+do\s+you\s+(?:keep|always|still|never)\b",
        S + r"you\s+(?:didn't|did\s+not|haven't|have\s+not|never|still\s+haven't|still\s+didn't|still\s+don't"
        r"|forgot|ignored|missed|skipped|keep|kept|misunderstood|misread|aren't\s+listening|are\s+not\s+listening"
        r"|(?:\w+\s+){0,2}the\s+wrong)\b",
        (r"\bstill\s+(?:not|doesn't|does\s+not|isn't|is\s+not|won't|will\s+not|can't|cannot|fails|failing"
        r"|broken|down|the\s+same|no|nothing|hasn't|has\s+not|didn't|did\s+not|don't|do\s+not|wrong|crashing"
        r"|getting\s+(?:the\s+|an?\s+|this\s+|that\s+)?(?:same\s+)?(?:error|errors|exception|timeout|\d{3}))\b"),
        S + r"(?:once\s+)?again\s*[:!]",
        r"^again\b(?![,\s]+(?:thanks|thank))",
        r"\bfor\s+the\s+(?:second|third|fourth|fifth|tenth|last|\d+(?:st|nd|rd|th))\s+time\b",
        r"\bhow\s+many\s+times\s+(?:do|must|should|have|will|did)\s+i\b",
        r"\bi(?:'ll|\s+will)?\s+(?:ask|say|repeat)(?:\s+it|\s+this)?\s+(?:again|one\s+more\s+time)\b",
        r"\b(?:let\s+me\s+)?repeat(?:ing)?\s*:|\bi\s+repeat\b",
        S + r"(?:that's|that\s+is|thats|this\s+is|it's|it\s+is|you're|you\s+are|you\s+got\s+it|totally|completely)\s+wrong\b",
        r"^wrong\s*[.!,;:]|^wrong$",
        r"^wrong\s+(?:one|server|host|container|lxc|machine|target|file|directory|service|command|thing|place)\s*[.!]",
        r"\bwrong\s+(?:one|answer)\b",
        r"^stop\b[\s.!]*$",
        S + r"stop\s*!",
        S + r"(?:please\s+)?stop\s+(?:it|that|this|doing|trying|asking|repeating|guessing|apologi[sz]ing|making"
        r"|changing|touching|now|right\s+now|immediately)\b",
        (r"\b(?:seriously\s*[?!]|are\s+you\s+kidding|pay\s+attention|listen\s+to\s+me|did\s+you\s+(?:even\s+)?read"
        r"|read\s+my\s+(?:message|question|request)|not\s+again\b|ugh+\b|argh+\b|wtf\b|ffs\b|for\s+god'?s\s+sake)"),
        S + r"come\s+on\s*[,.!]",
        (r"\b(?:this|that|you)(?:'s|'re|\s+is|\s+are|\s+was)?\s+(?:so\s+|really\s+|completely\s+|totally\s+)?"
        r"(?:useless|ridiculous|frustrating|annoying|stupid|pointless|hopeless)\b"),
        r"\bthat's\s+not\s+(?:right|correct|it|true)\b|\bthat\s+is\s+not\s+(?:right|correct|it|true)\b",
    ),
    "de": (
        r"\bnein[,.!]*\s+ich\s+(?:hab(?:e)?|sagte|meinte|wollte)\b",
        (r"\bich\s+(?:hab(?:e)?\s+)?(?:(?:dir|ihnen|es|das)\s+)?(?:doch\s+)?(?:schon|bereits|gerade|eben)\s+"
        r"(?:gesagt|geschrieben|erklärt|gefragt)"),
        r"\bich\s+sagte\s+(?:doch|bereits|schon|dir)\b",
        r"\bwie\s+(?:schon\s+|bereits\s+)?gesagt\b",
        r"\bnicht,?\s+was\s+ich\s+(?:wollte|gefragt|gemeint|gesagt|meinte|verlangt|wollte)",
        r"\bich\s+meinte\b",
        r"\b(?:warum|wieso|weshalb)\s+(?:hast|bist)\b",
        r"\b(?:warum|wieso|weshalb)\s+(?:machst|tust|willst)\s+du\b|\b(?:warum|wieso)\s+haben\s+sie\b",
        S + r"du\s+hast\s+(?:\w+\s+){0,3}(?:falsch|falschen|falsche|nicht|nichts|vergessen|ignoriert)\b",
        r"\b(?:funktioniert|geht|läuft|klappt)\s+(?:immer\s+)?noch\s+(?:immer\s+)?nicht\b",
        r"\bimmer\s+noch\s+(?:nicht|kaputt|falsch|derselbe|dieselbe|der\s+gleiche|kein)",
        r"\bnoch\s+immer\s+nicht\b",
        S + r"(?:noch\s?mal|nochmals|erneut|wieder)\s*:",
        r"\bzum\s+(?:zweiten|dritten|vierten|x-ten|letzten)\s+mal\b",
        r"\bwie\s+oft\s+(?:noch|muss|soll)\b",
        r"^falsch\b",
        r"\bdas\s+ist\s+(?:doch\s+|völlig\s+|total\s+)?falsch\b",
        r"\b(?:hör|hoer)\s+(?:sofort\s+)?auf\b",
        r"^stopp?\b[\s.!]*$",
    ),
    "fr": (
        r"\bnon[,.!]*\s+j'ai\s+(?:dit|demandé)",
        r"\bj'ai\s+(?:déjà\s+|bien\s+)?dit\b",
        r"\bje\s+(?:t'|vous\s+)ai\s+(?:déjà\s+|bien\s+)?(?:dit|demandé|expliqué)",
        r"\bcomme\s+je\s+(?:l'ai\s+|te\s+l'ai\s+|vous\s+l'ai\s+)?(?:déjà\s+)?(?:dit|disais)",
        r"\bpas\s+ce\s+que\s+(?:j'ai\s+(?:demandé|dit)|je\s+(?:voulais|veux|demandais))",
        r"\bje\s+voulais\s+dire\b",
        r"\bpourquoi\s+(?:as-tu|avez-vous|tu\s+as|vous\s+avez|t'as|est-ce\s+que\s+(?:tu|vous))\b",
        S + r"(?:tu\s+n'as|vous\s+n'avez|t'as)\s+(?:pas|rien|toujours\s+pas|jamais)\b",
        r"\b(?:ça|ca|cela)\s+ne\s+(?:marche|fonctionne)\s+toujours\s+pas\b",
        r"\btoujours\s+pas\b",
        S + r"(?:encore\s+une\s+fois|de\s+nouveau|je\s+répète)\s*[:,!]",
        r"\bpour\s+la\s+(?:deuxième|troisième|énième|dernière)\s+fois\b",
        r"\bcombien\s+de\s+fois\s+(?:dois-je|faut-il|je\s+dois|vais-je)\b",
        r"^faux\b",
        r"\bc'est\s+(?:complètement\s+)?faux\b",
        r"\btu\s+(?:t'es|t'as)\s+trompé|\bvous\s+vous\s+êtes\s+trompé",
        r"^arr[êe]te(?:z)?\s*(?:!|\.|$|de\s|ça|tout)",
    ),
    "es": (
        r"\bno[,.!]*\s+(?:te\s+)?(?:dije|pedí|pregunté)\b",
        r"\b(?:ya\s+)?te\s+(?:lo\s+)?(?:dije|pedí|expliqué)\b",
        r"\bcomo\s+(?:ya\s+)?(?:te\s+)?dije\b",
        r"\bno\s+es\s+lo\s+que\s+(?:te\s+)?(?:pedí|pregunté|quería|dije)",
        r"\bquise\s+decir\b|\bme\s+refería\b",
        r"\bpor\s*qu[ée]\s+(?:hiciste|has\s+hecho|has|borraste|reiniciaste|cambiaste)\b",
        S + r"no\s+(?:hiciste|has\s+hecho|lo\s+hiciste|reiniciaste)\b",
        r"\bsigue\s+sin\s+funcionar\b|\btodav[ií]a\s+no\s+funciona|\bsigue\s+(?:fallando|igual|roto|caído)",
        S + r"(?:otra\s+vez|de\s+nuevo|repito)\s*[:,!]",
        r"\bpor\s+(?:segunda|tercera|última|enésima)\s+vez\b",
        r"\bcu[áa]ntas\s+veces\s+(?:te|tengo|debo|hay)\b",
        r"^incorrecto\b|\beso\s+(?:está|es)\s+(?:mal|incorrecto)\b|\best[áa]s\s+equivocad[oa]",
        S + r"deja\s+de\b|^basta\b",
    ),
    "pt": (
        r"\bnão[,.!]*\s+(?:eu\s+)?(?:disse|pedi|falei)\b",
        r"\b(?:eu\s+)?já\s+(?:te\s+|lhe\s+)?(?:disse|falei|pedi|expliquei)\b",
        r"\bcomo\s+(?:eu\s+)?(?:já\s+)?(?:disse|falei)\b",
        r"\bnão\s+(?:é|foi)\s+(?:isso\s+)?o\s+que\s+eu\s+(?:pedi|perguntei|queria|disse)",
        r"\bpor\s*que\s+(?:você|vc|tu)\s+(?:fez|apagou|reiniciou|não)\b",
        S + r"(?:você|vc)\s+não\s+(?:fez|reiniciou|respondeu|leu)\b",
        r"\bainda\s+não\s+(?:funciona|está\s+funcionando|deu\s+certo)\b|\bcontinua\s+(?:sem\s+funcionar|dando\s+erro|com\s+erro)",
        S + r"(?:de\s+novo|novamente|repito)\s*[:,!]",
        r"\bpela\s+(?:segunda|terceira|última)\s+vez\b",
        r"\bquantas\s+vezes\s+(?:eu|preciso|tenho)\b",
        r"^errado\b|\b(?:isso\s+)?(?:está|tá)\s+errado\b",
        S + r"para\s+de\b|^pare\b[\s.!]*$",
    ),
    "it": (
        r"\bno[,.!]*\s+(?:ho|avevo)\s+(?:detto|chiesto)",
        r"\bti\s+(?:ho|avevo)\s+(?:già\s+)?(?:detto|chiesto|spiegato)",
        r"\bcome\s+(?:ti\s+)?(?:ho\s+)?già\s+detto\b",
        r"\bnon\s+è\s+(?:quello|ciò)\s+che\s+(?:ho\s+chiesto|volevo|intendevo)",
        r"\bintendevo\b",
        r"\bperch[ée]\s+hai\b",
        S + r"non\s+hai\s+(?:fatto|riavviato|risposto|letto)\b",
        r"\bancora\s+non\s+funziona|\bnon\s+funziona\s+ancora\b|\bcontinua\s+a\s+non\b",
        S + r"(?:di\s+nuovo|ancora\s+una\s+volta|ripeto)\s*[:,!]",
        r"\bper\s+la\s+(?:seconda|terza|ultima)\s+volta\b",
        r"\bquante\s+volte\s+(?:devo|te)\b",
        r"^sbagliato\b|\bè\s+sbagliato\b|\bhai\s+sbagliato\b",
        r"^(?:basta|smettila|fermati)\b",
    ),
    "nl": (
        r"\bnee[,.!]*\s+ik\s+(?:zei|vroeg|bedoelde)",
        r"\bik\s+(?:heb|had)\s+(?:het\s+)?(?:(?:al|toch|net|je|jou)\s+)+gezegd",
        r"\bzoals\s+ik\s+(?:al\s+)?zei\b",
        r"\bdat\s+is\s+niet\s+wat\s+ik\b",
        r"\bik\s+bedoelde\b",
        r"\bwaarom\s+heb\s+je\b",
        S + r"je\s+hebt\s+(?:het\s+)?(?:niet|nog\s+steeds\s+niet)\b",
        r"\bwerkt\s+(?:nog\s+steeds|nog\s+altijd)\s+niet\b",
        S + r"nogmaals\s*[:,!]",
        r"^fout\b|\bdat\s+is\s+fout\b",
        r"\bhou\s+op\b",
    ),
    "ru": (
        r"\bнет[,.!]*\s+я\s+(?:же\s+)?(?:сказал|сказала|просил|просила|имел|имела|писал|писала)",
        r"\bя\s+(?:же\s+|уже\s+)+(?:сказал|сказала|говорил|говорила|просил|просила|писал|писала)",
        r"\bя\s+(?:же\s+)?тебе\s+(?:уже\s+|же\s+)?(?:сказал|сказала|говорил|говорила)",
        r"\bкак\s+я\s+(?:уже\s+)?(?:сказал|сказала|говорил|говорила)",
        r"\bне\s+то,?\s+(?:что|чего)\s+я\s+(?:просил|просила|спрашивал|спрашивала|хотел|хотела)",
        r"\bя\s+имел[аи]?\s+в\s+виду\b",
        r"\b(?:почему|зачем)\s+ты\b",
        S + r"ты\s+(?:не|так\s+и\s+не|опять|снова)\s+(?!мог(?:ла|ли)?\s+бы|против)\w+",
        r"\b(?:всё|все)\s+(?:ещё|еще)\s+не\s+работает|\bдо\s+сих\s+пор\s+не\b|\bпо-прежнему\s+не\b",
        r"\bопять\s+не\s+работает|\bснова\s+не\s+работает",
        S + r"(?:ещё|еще)\s+раз\s*[:,!]",
        S + r"(?:снова|опять|повторяю)\s*[:,!]",
        r"\bв\s+(?:который|какой|десятый|третий|второй)\s+раз\b",
        r"\bсколько\s+(?:можно|раз\s+(?:повторять|говорить|просить))",
        r"^(?:неправильно|неверно|не\s+так)\b|\bэто\s+(?:неправильно|неверно|не\s+так)\b|\bты\s+ошиб",
        r"^(?:хватит|прекрати|стоп)\b",
    ),
    "pl": (
        r"\bnie[,.!]*\s+(?:powiedziałem|powiedziałam|mówiłem|mówiłam|prosiłem|prosiłam)",
        r"\bjuż\s+(?:ci\s+)?(?:mówiłem|mówiłam|pisałem|pisałam|powiedziałem|powiedziałam)",
        r"\bto\s+nie\s+(?:to|jest\s+to),?\s+o\s+co\s+(?:prosiłem|prosiłam|pytałem|pytałam)",
        r"\b(?:dlaczego|czemu)\s+(?:to\s+)?\w+(?:łeś|łaś)\b",
        r"\b(?:nadal|wciąż|dalej)\s+nie\s+działa",
        r"^źle\b",
        r"^przestań\b",
    ),
    "tr": (
        r"\bhayır[,.!]*\s+(?:ben\s+)?(?:\w+\s+)?(?:dedim|söyledim)",
        r"\b(?:sana\s+)?(?:zaten\s+)?söyledim\b",
        r"\bistediğim\s+(?:bu\s+)?değil",
        r"\bh[aâ]l[aâ]\s+çalışmıyor",
        r"^yanlış\b|\bbu\s+yanlış\b",
        r"\bneden\s+\w+(?:dın|din|dun|dün|tın|tin|tun|tün)\b",
    ),
    "zh": (
        r"不是[,，]?\s*我(?:说|要|问)的?是",
        r"我(?:已经|刚才|刚刚|早就|都)(?:说|讲|告诉你)",
        r"我说过|我说了|告诉过你|跟你说了|跟你说过",
        r"不是我(?:要|想要|问|说)的",
        r"我的意思是",
        r"你为什么|为什么你|你怎么(?:又|还|没)",
        r"你(?:还)?没(?:有)?(?:做|重启|回答|看|执行|改|完成|听)",
        r"还是不(?:行|工作|能用|对)|仍然不|依然不|还是没(?:有)?(?:好|解决|用)",
        r"再说一(?:遍|次)|说了多少(?:遍|次)|第(?:二|三|几|n)(?:遍|次)了",
        r"^不对|不对[，,。!！]|(?:^|你|搞|弄|说|做)错了",
        r"^(?:停下|停止)|别再",
    ),
    "ja": (
        r"^(?:違う|ちがう|違います|そうじゃない|そうではない)",
        r"(?:違う|ちがう)(?:よ|って|の)",
        r"(?:もう|すでに|既に|さっき|前に)(?:言った|言いました|伝えた|伝えました|書いた|書きました)",
        r"言ったでしょ|言ったのに|って言った(?:よね|じゃん|でしょ)",
        r"(?:頼んだ|お願いした|聞いた)のは",
        r"(?:なんで|なぜ|どうして).{0,15}(?:したの|した\?|したんですか|しましたか|するの)",
        r"勝手に",
        r"まだ(?:動かない|動きません|直って(?:い)?ない|直っていません|治って(?:い)?ない|だめ|ダメ|うまくいかない|解決して(?:い)?ない)",
        r"もう一度言(?:う|います)|何度も言|何回言",
        r"^(?:やめて|止めて|ストップ)",
    ),
    "ko": (
        r"(?:이미|벌써|아까)\s*말했",
        r"말했잖아|그게\s*아니(?:라|고)|내가\s*(?:원한|요청한|말한)\s*(?:건|것은)",
        r"왜.{0,20}?(?:했어|했나요|했니|한\s*거야|했습니까)",
        r"아직도\s*안|여전히\s*안",
        r"다시\s*말하지만|몇\s*번(?:을|이나)?\s*말",
        r"^틀렸|틀렸어|잘못\s*했",
        r"^그만",
    ),
}
_CORRECTIONS = [(lang, re.compile(p)) for lang, patterns in CORRECTIONS.items() for p in patterns]

# Nudges after a missing answer, and requests to try again (not conditional ones: "if it
# fails, try again" is an instruction, not a complaint).
NUDGES = (
    r"^(?:\?+|hello\s*\?+|hallo\s*\?+|(?:are\s+)?you\s+there\s*\?+|anyone\s+there\s*\?+|huh\s*\?+|what\s*\?+!*)$",
    r"^what\s*\?+!*\s",
    r"\b(?:empty|blank)\s+(?:message|reply|response|answer)\b",
    r"\b(?:reply|answer|response|message)\s+(?:is|was)\s+(?:blank|empty|missing)\b",
    r"^no\s+(?:answer|reply|response)\b",
    (r"\b(?:leere|keine)\s+antwort\b|\bréponse\s+vide\b|\brespuesta\s+vac[ií]a\b|\bпустой\s+ответ\b"
    r"|空(?:白)?(?:的)?(?:回复|回答|消息)|返事がない|空の(?:返信|応答)"),
)
RETRY = (
    (r"\b(?:try|do|run)\s+(?:it\s+|that\s+|this\s+)?again\b|^retry\b|\bplease\s+retry\b"
    r"|\bretry\s+(?:it|that|this|now|please)\b"),
    r"\bversuch(?:e|s)?\s+(?:es\s+)?(?:noch\s?mal|erneut)|\bnoch\s?mal\s+versuchen",
    r"\bréessa(?:ie|yez|ye)\b|\bessa(?:ie|ye)z?\s+(?:encore|à\s+nouveau|de\s+nouveau)",
    r"\bint[ée]ntalo\s+(?:de\s+nuevo|otra\s+vez)|\bvuelve\s+a\s+intentar|\bprueba\s+(?:otra\s+vez|de\s+nuevo)",
    r"\btente\s+(?:novamente|de\s+novo)|\btenta\s+de\s+novo|\briprova\b|\bprobeer\s+(?:het\s+)?opnieuw",
    r"\bпопробуй(?:те)?\s+(?:ещё|еще)\s+раз|\bпопробуй(?:те)?\s+снова",
    r"再试一(?:次|下)|再试试|重试|もう一度(?:試|やって)|やり直して|다시\s*(?:시도|해)",
)
_CONDITIONAL = re.compile(r"\b(?:if|when|unless|in\s+case|wenn|falls|si|se|если|когда)\b|如果|もし|なら")
# Pushing back on a refusal: only after the assistant said it cannot do something.
REFUSAL = re.compile(
    r"\b(?:can't|cannot|can\s+not|unable\s+to|not\s+able\s+to|don't\s+have\s+(?:access|the\s+ability|a\s+tool)"
    r"|no\s+(?:access|tool|way)|kann\s+(?:ich\s+)?(?:keine|nicht)|ne\s+(?:peux|puis)\s+pas|no\s+puedo|não\s+(?:posso|consigo)"
    r"|non\s+posso|не\s+могу)\b|无法|不能|できません"
)
PUSHBACK = (
    r"\byou\s+(?:do\s+|definitely\s+|certainly\s+)?(?:have|can|could)\s+(?:\S+\s+){0,4}?(?:run|use|access|do|execute)\b",
    r"\byou\s+(?:ran|did|used|executed)\s+(?:\S+\s+){0,3}?(?:before|yesterday|earlier|already)\b",
    r"\b(?:just|please|simply)\s+(?:use|run|do)\b|\buse\s+(?:the\s+)?run\b|\bof\s+course\s+you\s+can\b",
    (r"\bdu\s+(?:kannst|hast)\b|\btu\s+(?:peux|as)\b|\bvous\s+(?:pouvez|avez)\b|\b(?:sí\s+)?puedes\b"
    r"|\bvocê\s+pode\b|\bты\s+(?:можешь|умеешь)\b|你(?:可以|能)|できるはず|できます(?:よ|って)"),
)
_NUDGES = [re.compile(p) for p in NUDGES]
_RETRY = [re.compile(p) for p in RETRY]
_PUSHBACK = [re.compile(p) for p in PUSHBACK]
_GATES = WordGates()
_CORRECTIONS_GATED = _GATES.add(_CORRECTIONS, key=lambda item: item[1])
_NUDGES_GATED = _GATES.add(_NUDGES)
_RETRY_GATED = _GATES.add(_RETRY)
_candidate_mask = _GATES.mask
_candidates = WordGates.candidates


# A bare "no" opens a correction, unless it answers the assistant's question or closes politely.
_LEADING_NO = re.compile(r"^(?:no+|nope|nah|nein|non|não|nee|нет|nie|hayır|不|いいえ|아니(?:요|야)?)(?:[\s,.!。，！]|$)")
_POLITE_NO = re.compile(
    r"^\S+[\s,.!。，！]*(?:thanks|thank\s+you|problem|worries|need|that's\s+(?:all|it|everything)|that\s+is\s+all"
    r"|all\s+good|i'm\s+good|we're\s+good|nothing|more"
    r"|other|further|rush|hurry|danke|merci|gracias|obrigad|grazie|спасибо|谢谢|ありがとう)"
)
_AFFIRMATION = re.compile(
    r"^(?:yes|yeah|yep|yup|sure|ok(?:ay)?|correct|right|exactly|go\s+ahead|do\s+it|please\s+do|proceed|confirm(?:ed)?"
    r"|approved?|ja|jawohl|genau|richtig|oui|d'accord|exactement|sí|si|claro|vale|dale|sim|certo|isso|sì|esatto"
    r"|да|ага|конечно|верно|tak|evet|是|是的|好|好的|对|可以|はい|ええ|うん|네|예|응)(?=$|[\W_])"
)
_CONFIRMATION_REQUEST = re.compile(
    r"\b(?:confirm|are\s+you\s+sure|should\s+i|shall\s+i|do\s+you\s+want\s+me|would\s+you\s+like\s+me|ok\s+to"
    r"|proceed|approve|soll\s+ich|bestätig|dois-je|voulez-vous\s+que|confirme[rz]?|debo|quieres\s+que"
    r"|devo|vuoi\s+che|подтверд|мне\s+нужно)|是否|确认|要不要|しますか|よろしいですか|할까요"
)

# ---------------------------------------------------------------- repeats
_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_QUOTED_LINE = re.compile(r"^\s*>.*$", re.MULTILINE)
_SPACELESS = r"\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# words, numbers apart ("lxc/105", "lxc105" and "lxc 105" all give lxc, 105); one token per
# character in scripts written without spaces
_TOKEN = re.compile(rf"[{_SPACELESS}]|\d+|[^\W\d_{_SPACELESS}]+")
# words that change nothing about a request ("please", "again", "I said") across languages
_FILLER_WORDS = frozenset("""
please pls plz again now just still i said already told you asked repeat once more ok okay so well
yes yeah yep sure go ahead do it proceed continue approve approved confirm thanks thank hey hello hi
bitte nochmal noch mal erneut wieder ja doch ich habe gesagt
s'il vous plaît plait encore oui je dit
por favor otra vez de nuevo sí si te dije
novo sim eu disse já
per favore di ancora ho detto
пожалуйста ещё еще раз снова опять да я сказал же
""".split())
_FILLER_SPACELESS = re.compile(r"请|再|一次|一遍|好的|お願いします|お願い|もう一度|제발|다시")
MIN_CONTENT = 3.0  # content weight a message needs to count as a repeatable request
MIN_CHARS = 12
SIMILAR = 0.8


MAX_SCAN = 4000  # characters of a long message that are read: its head and its tail
MAX_TOKENS = 300  # longer messages only count as repeats when identical


def normalise(text: str | None) -> str:
    """Lower-case NFKC text with code, quoted lines and curly quotes out of the way."""
    if not text:
        return ""
    if len(text) > MAX_SCAN:  # a pasted log: a complaint sits before or after it
        text = text[: MAX_SCAN - 1000] + "\n" + text[-1000:]
    text = unicodedata.normalize("NFKC", text)
    text = _CODE_BLOCK.sub(" ", text)
    text = _INLINE_CODE.sub(" ", text)
    text = _QUOTED_LINE.sub(" ", text)
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    return " ".join(text.lower().split())


def content_tokens(normalised: str) -> list[str]:
    """Tokens that carry the request: words (characters in scripts without spaces), filler removed."""
    text = _FILLER_SPACELESS.sub(" ", normalised)
    return [t for t in _TOKEN.findall(text) if t not in _FILLER_WORDS]


_SPACELESS_CHAR = re.compile(rf"[{_SPACELESS}]")


def substantive(normalised: str, tokens: list[str] | None = None) -> bool:
    """Whether a message says enough to count as a request (`tokens`: its content_tokens, if known)."""
    if tokens is None:
        tokens = content_tokens(normalised)
    if normalised.isascii():
        return len(tokens) >= MIN_CONTENT and len(normalised) >= MIN_CHARS
    # a character of a script without spaces is a token of its own and weighs half a word
    weight = len(tokens) - 0.5 * sum(1 for t in tokens if _SPACELESS_CHAR.match(t))
    return weight >= MIN_CONTENT and len(normalised) >= (MIN_CHARS if not _SPACELESS_CHAR.search(normalised) else 6)


def near_repeat(a: list[str], b: list[str]) -> bool:
    """Same request: similar token sequences whose only substitutions are typos or spacing."""
    if not a or not b:
        return False
    if max(len(a), len(b)) > MAX_TOKENS:
        return a == b
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    # quick_ratio bounds ratio from above and costs a fraction of it
    if matcher.quick_ratio() < SIMILAR or matcher.ratio() < SIMILAR:
        return False
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "replace":
            continue
        left, right = a[i1:i2], b[j1:j2]
        if _alnum("".join(left)) == _alnum("".join(right)):
            continue  # "lxc/105" vs "lxc 105"
        if len(left) == len(right) and all(_typo(x, y) for x, y in zip(left, right)):
            continue
        return False  # a different target, name or number: a different request
    return True


def _alnum(text: str) -> str:
    return re.sub(r"[\W_]", "", text)


def _typo(x: str, y: str) -> bool:
    if re.sub(r"\D", "", x) != re.sub(r"\D", "", y) or min(len(x), len(y)) < 4:
        return False
    return SequenceMatcher(None, x, y).ratio() >= 0.8


def asks(text: str | None) -> bool:
    """Whether an assistant reply ends by asking the user something (a question or a confirmation)."""
    return _asks(normalise(text))


def _asks(reply: str | None) -> bool:
    """`asks` on an already normalised reply (None: there was none)."""
    if not reply:
        return False
    tail = reply[-400:]
    return "?" in tail or bool(_CONFIRMATION_REQUEST.search(tail))


# ---------------------------------------------------------------- the rule
class UserFrustration(Rule):
    """The user had to correct, repeat, nudge or rebuke the agent.

    Detects: user messages, after the agent has replied at least once, that (a) contain a
    correction or rebuke, in English, German, French, Spanish, Portuguese, Italian, Dutch,
    Russian, Polish, Turkish, Chinese, Japanese or Korean ("no, I said…", "that's not what I
    asked", "I already told you", "again:", "that's wrong", "stop!", "why did you…", "you
    didn't…", "still not working", "for the third time"…); (b) nudge the agent after a
    missing answer ("?", "you there?", "the reply is blank") or ask it to try again (not a
    conditional "if it fails, try again"); (c) push back on a refusal ("you do have the run
    tool", "just run it"), only right after the assistant said it cannot do something; or
    (d) repeat the previous substantive user message near-verbatim: the same words after
    normalisation (case, Unicode, punctuation, filler such as "please"/"again"/"I said"), where
    the only substitutions are typos or spacing; a different host, name or number makes it a
    different request. Short messages (fewer than three content words: "yes", "ok",
    "continue", "do it") never count as repeats, and neither do answers: a message that
    starts with yes/no after the assistant asked something, retypes the request to confirm
    it, or gives the same answer to a different question. A leading "no" is a correction only
    when the assistant had not asked a question. Code blocks and quoted lines are ignored;
    the first user message never counts. One finding per session, quoting each such message.
    Root cause: the agent misunderstood or ignored the request, acted on the wrong target,
    refused something it can do, claimed success that did not hold, returned nothing, or
    asked for what the user had already said; the user spent turns steering it instead of
    getting the task done.
    Fix: read the quoted messages against the agent's replies before them; tighten SOUL.md
    (restate the target before acting, verify results before claiming success, never ask for
    information already given, use `run` instead of refusing) and add the exchange to the
    agent's evaluation set.
    """

    code = "NF106"
    name = "user-frustration"
    severity = Severity.FRICTION

    def check(self, session: Session, ctx) -> Iterator[Finding]:
        hits: list[tuple[Message, str]] = []
        seen_assistant = False
        assistant_text: str | None = None  # the assistant's last text since the previous user message
        previous: tuple[Message, list[str], str | None] | None = None  # last substantive user message
        for message in session.messages:
            if message.role == "assistant":
                seen_assistant = True
                if message.has_text:
                    assistant_text = message.text
                continue
            if message.role != "user":
                continue
            text = normalise(message.text)
            tokens = content_tokens(text)
            is_request = substantive(text, tokens)
            reply = normalise(assistant_text) if assistant_text is not None else None  # once per reply
            asked = _asks(reply)
            if seen_assistant and text:
                reason = self._correction(text, reply, asked)
                if reason is None and previous is not None and is_request:
                    before, before_tokens, before_question = previous
                    if near_repeat(before_tokens, tokens) and not _answers(
                        text, before_tokens, reply, before_question, asked
                    ):
                        reason = f"repeat of message {before.id} (turn {before.turn})"
                if reason:
                    hits.append((message, f"{reason}: \u201c{excerpt(message.text, 150)}\u201d"))
            if is_request:
                previous = (message, tokens, reply if asked else None)
            assistant_text = None
        if not hits:
            return
        turns = ", ".join(str(t) for t in sorted({m.turn for m, _ in hits})[:6])
        count = len(hits)
        yield self.finding(
            f"the user corrected, repeated or nudged the agent in {count} message{'s' if count != 1 else ''}"
            f" (turn {turns})",
            hits,
        )

    @staticmethod
    def _correction(text: str, reply: str | None, asked: bool | None = None) -> str | None:
        """Why `text` corrects, rebukes or nudges the agent, or None (`text` and the assistant's
        `reply` before it normalised; `reply` None when there was none; `asked`: `_asks(reply)`,
        if known)."""
        mask = _candidate_mask(text)
        for lang, pattern in _candidates(_CORRECTIONS_GATED, mask):
            match = pattern.search(text)
            if match:
                return f"correction ({lang}: \u201c{match.group(0).strip()}\u201d)"
        for pattern in _candidates(_NUDGES_GATED, mask):
            if pattern.search(text):
                return "nudge (no answer, or disbelief)"
        for pattern in _candidates(_RETRY_GATED, mask):
            match = pattern.search(text)
            if match and not _CONDITIONAL.search(_sentence_before(text, match.start())):
                return f"retry request (\u201c{match.group(0).strip()}\u201d)"
        return UserFrustration._weak_signal(text, reply, _asks(reply) if asked is None else asked)

    @staticmethod
    def _weak_signal(text: str, reply: str | None, asked: bool) -> str | None:
        """Signals that depend on what the assistant said just before."""
        refused = reply is not None and REFUSAL.search(reply[-600:])
        if refused and any(p.search(text) for p in _PUSHBACK):
            return "pushback on a refusal"
        if not asked and _LEADING_NO.match(text) and not _POLITE_NO.match(text):
            return "correction (leading no)"
        return None


def _sentence_before(text: str, end: int) -> str:
    start = max(text.rfind(mark, 0, end) for mark in ".!?;\n。！？")
    return text[start + 1:end]


def _answers(
    text: str, before_tokens: list[str], reply: str | None, before_question: str | None, asked: bool
) -> bool:
    """Whether a repeated message is an answer to the assistant rather than a re-sent request
    (`reply` and `before_question`: normalised assistant texts, or None; `asked`: `_asks(reply)`)."""
    if not asked:
        return False
    if _AFFIRMATION.match(text) or _LEADING_NO.match(text):
        return True
    asked = reply
    if _CONFIRMATION_REQUEST.search(asked[-400:]):
        return True  # the user retyped the request to confirm it
    echoed = set(content_tokens(asked))
    if before_tokens and sum(t in echoed for t in before_tokens) / len(before_tokens) >= 0.8:
        return True  # the assistant quoted the request back and asked about it
    if before_question is not None:
        # both messages answer questions: the same words to different questions are answers
        return SequenceMatcher(None, content_tokens(before_question), content_tokens(asked)).ratio() < 0.8
    return False


@hookimpl
def nomos_forensics_rules():
    return [UserFrustration]
