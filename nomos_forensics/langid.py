"""Offline language identification for chat text: scripts, word lists, then Lingua.

Three stages, cheapest first, all offline:

1. Scripts. Prose (code blocks, reasoning blocks, inline code, quoted lines and strings, URLs,
   paths and technical tokens removed) is measured in *word units* per Unicode script: a Latin
   or Cyrillic word is one unit, Han characters count 1/1.5 unit each, Kana 1/2.5, Thai 1/5, …
   so that "为什么 kubectl 连不上 API server？" is Chinese and an English sentence quoting
   "清华大学开源软件镜像站" is not. Scripts that identify a language (or a family) decide by
   themselves: Han/Kana/Hangul, Cyrillic (Ukrainian, Serbian, Bulgarian… by their letters),
   Arabic (Persian and Urdu by theirs), Hebrew, Greek, Devanagari, Thai…
2. Word lists (`LEXICONS`): function words, polite words and everyday operations words of
   English and 32 other Latin-script languages, plus letters that only some languages use
   (ñ ¿ ß ł ğ ő ă đ ơ å ø …). Each word's vote is shared among the languages that use it
   (English keeps half of a word it shares); words that every language borrows ("server",
   "backup", "container", "nginx") vote for none. A reply needs several different function
   words of its language (a list of names with one "Sans" in it is not French); a short user
   message may be decided by one word ("danke", "gracias"). This decides almost every English
   text, and most others, at once.
3. Lingua (lingua-language-detector; its models ship inside the wheel, nothing is downloaded)
   in low-accuracy mode over a fixed set of Latin-script languages, only for Latin prose of at
   least LINGUA_MIN_LETTERS letters in which the word lists saw another language but could not
   decide, and never when English leads. English text almost never gets here (Cyrillic and
   other scripts never do); the detector loads lazily, once per process.

Prose is read in chunks of CHUNK_CHARS, at most ANALYSE_CHARS characters, and reading stops as
soon as one language family has clearly won: a long English reply costs one chunk, tens of
microseconds.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from itertools import chain

# Languages Lingua chooses among for Latin-script text (ISO 639-1).
LINGUA_LANGUAGES = (
    "en es fr de pt it nl pl tr vi id ms sv da nb fi cs sk ro hu hr ca sl lt lv et tl sw af sq eu ga is"
).split()

MIN_LETTERS = 20  # kept for callers; replies are measured in word units (MIN_UNITS)
MIN_CONFIDENCE = 0.6
MIN_UNITS = 3.0  # word units of prose needed to call the language of a reply
LINGUA_MIN_LETTERS = 24
ANALYSE_CHARS = 1500

_CODE_BLOCK = re.compile(r"```.*?(?:```|$)|~~~.*?(?:~~~|$)|<think(?:ing)?>.*?(?:</think(?:ing)?>|$)", re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_QUOTED_LINE = re.compile(r"(?m)^[ \t]*>.*$")
# A token (a run of non-space characters) with a digit, `_`, a path or URL character, an
# operator, or a dot or colon inside: paths, URLs, versions, commands, key=value, e-mails.
_TECH_TOKEN = re.compile(r"(?<!\S)(?=\S*?(?:[\d_@=<>{}\[\]\\|$#*/~^]|[.:]\w))\S+")
_QUOTED = re.compile(r'"[^"\n]{1,300}"|“[^”\n]{1,300}”|„[^“”\n]{1,300}[“”]|«[^»\n]{1,300}»|「[^」\n]{1,300}」|『[^』\n]{1,300}』')
_LETTER_RUN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
# A word of prose: letters (with inner apostrophes) that are not part of a technical token,
# i.e. not glued to digits, `_`, path, URL or operator characters, nor to an inner dot or colon
# ("nginx.conf", "/etc/hosts", "v1.2", "key=value", "user@host" yield no word).
_PROSE_WORD = re.compile(
    r"(?<![\w/\\@=$#.:~%&+])[^\W\d_]+(?:['’][^\W\d_]+)*(?![\w/\\@=$#~%&+]|[.:'’][^\W_])"
)
# The same words in lowered ASCII text (the usual case), where letters are [a-z], found in about
# 60% of the time: explicit classes, a leading [a-z] that lets the engine skip to letters (so the
# lookbehind moves after it), and possessive runs, since backtracking into a word never matches.
_ASCII_PROSE_WORD = re.compile(
    r"[a-z](?<![a-z0-9_/\\@=$#.:~%&+].)[a-z]*+(?:'[a-z]+)*+(?![a-z0-9_/\\@=$#~%&+]|[.:'][a-z0-9])"
)
# Tokens that are paths, URLs, e-mails or assignments (removed before counting scripts).
_PATHLIKE = re.compile(r"(?<!\S)\S*?[/\\@=_]\S*")

# ----------------------------------------------------------------------------- word lists
# Words every language borrows in operations talk: no vote.
NEUTRAL = frozenset(
    """ok okay server servers container containers backup backups log logs status cluster docker
    nginx proxy cache firewall router host hosts pod pods job jobs kernel script
    web online offline cron api dns vpn ssl tls ssh http https cpu
    ram gb mb tb kb ms root admin login sudo node nodes vm vms lxc ct pve git bash shell linux
    debian ubuntu windows redis postgres postgresql mysql grafana prometheus traefik k3s kubectl
    systemctl journalctl apt yum zfs nfs smb ceph raid smart ups ntp uptime timeout error
    warning info debug hallo hello hi hey sorry pizza internet email mail chat bot agent disk disks
    network port ports file files folder config configuration database user users password
    certificate cert version release package packages system machine site page service
    services load task tasks""".split()
)

# Function words and everyday words per language. English words are split in two tiers:
# markers (weight 1) and common content words (weight 0.5).
ENGLISH_MARKERS = frozenset(
    """the and is are you your that this with have has it's i'm i've i'll i'd can't don't
    doesn't didn't won't isn't aren't wasn't weren't couldn't wouldn't shouldn't haven't hasn't
    be it what which would should could there their they here from not but or if we our were
    been just please can any some about into out up these those how when where why who than
    then them she his her does did let's yes unfortunately however able unable of to in on for
    my me i an at by as all also now will was do done no so its there's that's what's here's
    you're we're they're you've we've you'll we'll thanks thank sure let seems looks because
    after before while since until without within over under only still already again very
    more most other each every both either neither something anything nothing everything
    itself myself yourself should've would've they've""".split()
)
ENGLISH_WORDS = frozenset(
    """check show list tell give make find look need want help try use keep take send start stop
    running stopped restarted rebooted started checked found fixed working broken failed
    failing full free used left right first last next previous new old good bad same many
    much today yesterday tomorrow time day days week hour hours minute minutes seconds
    memory space usage valid expired latest why
    healthy active inactive slow fast high low empty well got get go going know think see
    said says say means mean move copy open close enable disable install remove delete create
    add fix clean run ran set put also everything fine great good thanks hello approve plan
    step steps following issue issues problem problems reply answer question request access
    able cannot unable permission sorry apologize afraid restart reboot update upgrade deploy
    build about around approximately roughly percent successfully completed complete finished
    finish succeeded passed returned responded responding installed updated removed deleted
    created added enabled disabled configured mounted cleaned renewed rotated stuck currently
    recently usually normally properly correctly already yet left right now still errors
    warnings nothing looks seems everything something anything someone back down over again
    please thank thanks welcome great perfect okay alright sure here there these those which
    while since until though although whether either because without within between during
    through across against along among behind below beneath beside beyond inside outside
    instead rather quite pretty really very just almost enough least less fewer more most
    several few many lots plenty whole half both each every any some other another such same
    different latest earlier later ago soon tonight morning afternoon evening night week month
    year hours minutes running stopped healthy unhealthy reachable unreachable available
    unavailable online working fine broken slow fast high low full empty free used""".split()
)

LEXICONS: dict[str, str] = {
    # function words, then polite words, then everyday operations verbs and nouns
    "es": """vale venga bueno genial perfecto pues entonces algo nada nadie siempre nunca mismo cada otro otros otras poco mucho muchos tanto menos mejor peor nuevo nueva primero último parece según durante mientras aunque además casi solo sólo días horas minutos semana mes año todavía aún están había sería será puede pueden debe deben hacer hecho vez veces ningún ninguna sigo seguir sigue de el la los las del un una unos unas y o es son está están estoy estás era fue no que qué
        por para con en se lo le les mi mis tu tus su sus al como cómo pero más muy sí ya todo
        todos esta este eso esto esa ese estos estas hay puedes puede puedo podrías necesito quiero
        cuando cuándo donde dónde porque hacer hace ha he han hemos sido ser ahora después antes
        sin sobre entre desde hasta hoy ayer mañana bien mal nada otra otro vez también aquí
        gracias favor hola siento perdón disculpa lamentablemente desafortunadamente claro listo
        servidor contenedor disco memoria archivo registro registros copia seguridad error
        errores problema espacio uso reinicia reiniciar revisa revisar comprueba comprobar
        muestra muestrame muéstrame mostrar dime dame borra borrar elimina eliminar instala
        instalar actualiza actualizar lista listar arranca arrancar detén para ejecutar acceso
        funciona funcionando tengo tiene tienes usted ustedes ayudar""",
    "pt": """sim sem então algo ninguém sempre nunca mesmo cada outro outros pouco muitos tanto menos melhor pior novo nova primeiro último parece segundo durante enquanto embora além quase só dias horas minutos semana mês ano ainda estava seria será podem deve devem feito vez vezes nenhum nenhuma ok beleza valeu certo de o os a as do da dos das um uma e é são está estão estou era foi não que para com em se
        você vocês por meu minha seu sua pode posso preciso quero também muito já mas mais como
        quando onde porque fazer ser tem têm ter agora depois antes sem sobre entre desde até
        hoje ontem amanhã bem ao aos à na no nas nos pelo pela isso isto esse essa aqui nada
        favor obrigado obrigada olá desculpe lamento infelizmente pronto claro servidor
        contêiner memória arquivo registro banco dados serviço erro erros problema espaço uso
        reinicie reiniciar verifique verificar mostre mostrar liste listar apague apagar instale
        instalar atualize atualizar executar acesso tenho consigo ajudar comando""",
    "fr": """alors quelque rien personne toujours jamais même chaque autre autres peu beaucoup tant moins mieux pire nouveau nouvelle premier dernier semble selon pendant tandis bien que encore déjà jours heures minutes semaine mois an année était serait sera peuvent doit doivent fois aucun aucune d'accord voilà oui non vas va le la les de des du un une et est sont était été pas ne je tu il elle nous vous ils
        elles que qui quoi pour dans sur avec ce cette ces cet mais ou où mon ma mes ton ta tes
        son sa ses notre votre vos leur peux peut veux pouvez voulez faire fait être avoir ai as
        avez ont y en au aux par plus moins comme quand pourquoi comment maintenant après avant
        sans entre depuis aujourd'hui hier demain très aussi tout tous toutes bien ici rien
        s'il plaît merci bonjour salut désolé désolée malheureusement c'est j'ai n'ai qu'il
        d'accès l'accès serveur conteneur disque mémoire fichier journal journaux sauvegarde
        erreur erreurs problème espace redémarre redémarrer vérifie vérifier affiche afficher
        montre montrer liste lister supprime supprimer installe installer mets exécuter accès
        fonctionne aider""",
    "de": """also etwas nichts niemand immer nie gleich jede jeder jedes andere anderen wenig viel viele weniger besser schlechter neue neuer erste letzte scheint laut während obwohl außerdem fast tage stunden minuten woche monat jahr noch bereits wäre wird können müssen soll gemacht mal alles klar okay ja nein genau einverstanden prima der die das den dem des ein eine einen einem einer und ist sind war wurde werden nicht
        ich du sie er es wir ihr mit auf für zu von bei aus nach kann kannst können mir mich dir
        dich uns auch noch schon aber oder wie was warum wo wann jetzt dann heute gestern morgen
        sehr gut haben habe hast hat sein kein keine keinen diese dieser dieses im am um vom zum
        zur nur hier mal wieder weil dass ob bitte danke leider tut leid entschuldigung gern
        festplatte speicher datei protokoll sicherung dienst fehler problem platz neu starte
        starten prüfe prüfen zeige zeig zeigen liste auflisten lösche löschen installiere
        installieren aktualisiere aktualisieren ausführen zugriff läuft funktioniert helfen""",
    "it": """allora qualcosa nessuno sempre mai stesso ogni altro altri poco tanti meno meglio peggio nuovo nuova primo ultimo sembra secondo durante mentre anche quasi solo giorni ore minuti settimana mese anno ancora già sarebbe sarà possono deve devono volta volte nessun nessuna va bene sì certo d'accordo perfetto il lo la i gli le di del della dello dei degli delle un una uno e è era sono non che
        per con in mi ti si ci questo questa quello quella puoi può posso voglio anche molto già
        perché come quando dove cosa fare fatto stato essere avere ho hai ha hanno adesso ora
        poi prima senza su tra da fino oggi ieri domani bene male al allo alla alle nel nella
        sul sulla qui niente più grazie prego ciao scusa purtroppo dispiace contenitore
        memoria registro servizio errore errori problema spazio riavvia riavviare controlla
        controllare mostra mostrami elenca elencare cancella cancellare installa installare
        aggiorna aggiornare eseguire accesso funziona aiutare""",
    "nl": """dus iets niets niemand altijd nooit dezelfde elke andere weinig veel minder beter slechter nieuwe eerste laatste lijkt volgens tijdens terwijl hoewel bijna alleen dagen uren minuten week maand jaar nog steeds zou zal kunnen moeten gemaakt keer prima oké ja nee klopt de het een en is zijn was niet ik je jij u we wij ze zij van op met voor dat dit die deze
        wat waarom hoe wanneer waar kun kan kunt wil ook maar nog wel al er naar bij uit om te
        heb heeft hebben werd worden geen nu dan vandaag gisteren morgen goed hier niets mijn
        jouw uw graag dank bedankt helaas sorry alsjeblieft schijf geheugen bestand
        logbestanden dienst fout fouten probleem ruimte herstart herstarten controleer
        controleren toon tonen laat lijst verwijder verwijderen installeer installeren
        bijwerken uitvoeren toegang werkt helpen opnieuw""",
    "pl": """ile jaki jaka jakie zostało zostały są było więc coś nic nikt zawsze nigdy każdy inny inne mało dużo wiele mniej lepiej gorzej nowy nowa pierwszy ostatni wydaje według podczas chociaż prawie tylko dni godziny minut tydzień miesiąc rok wciąż byłoby będzie mogą musi muszą zrobione raz razy dobrze okej tak nie jasne i w z na do nie jest są był była to że się jak co czy o dla od po przez ale lub oraz tak
        już jeszcze bardzo teraz dzisiaj wczoraj jutro mogę możesz może mam masz ma ten ta te
        tego tej mnie mi ci jego jej tutaj nic który która które dlaczego gdzie kiedy proszę
        dziękuję dzięki cześć niestety przepraszam serwer dysk pamięć plik dziennik logi błąd
        problem miejsce zrestartuj uruchom ponownie sprawdź pokaż usuń zainstaluj zaktualizuj
        wykonać dostępu dostęp działa pomóc""",
    "tr": """yani bir şey hiçbir hiç kimse her zaman asla aynı diğer az çok daha iyi kötü yeni ilk son gibi göre sırasında rağmen neredeyse sadece gün saat dakika hafta ay yıl hâlâ zaten olur olacak olabilir gerekir yapıldı kez tamam peki olur evet hayır tabii ve bir bu şu da de ile için mi mı mu mü ne neden nasıl nerede evet hayır şimdi bugün
        dün yarın çok daha sonra önce değil var yok ben sen biz siz onlar benim senin bunu şunu
        gibi kadar ama veya lütfen teşekkürler teşekkür ederim merhaba maalesef üzgünüm özür
        sunucu sunucuyu bellek dosya kayıt hata sorun alan yeniden başlat kontrol et göster
        listele sil kur güncelle çalıştır erişim çalışıyor yardım misin musun""",
    "vi": """vậy một cái gì không ai luôn bao giờ cùng mỗi khác ít nhiều hơn tốt xấu mới đầu tiên cuối dường theo trong khi mặc dù gần chỉ ngày giờ phút tuần tháng năm vẫn đã rồi sẽ có thể phải lần được rồi vâng dạ ừ và là của có không được cho này đó một các những với trong trên để khi thì tôi bạn anh
        chị em chúng ta họ đã đang sẽ rất cũng nhưng hoặc vì nên nếu gì sao như thế nào ở đâu
        bây giờ hôm nay xin cảm ơn lỗi giúp máy chủ ổ đĩa bộ nhớ tệp nhật ký dịch vụ khởi động
        lại kiểm tra hiển thị liệt kê xóa cài đặt cập nhật chạy truy cập hoạt động""",
    "id": """jadi sesuatu tidak ada siapa selalu pernah sama setiap lain sedikit banyak kurang lebih baik buruk baru pertama terakhir tampaknya menurut selama sementara meskipun hampir hanya hari jam menit minggu bulan tahun masih sudah akan bisa harus kali sampai depan semua lagi begitu seperti setelah sebelum tanpa antara kepada bahwa agar namun tapi sini sana oke siap baiklah benar salah dan yang di ke dari ini itu untuk dengan pada adalah tidak ya saya anda kamu kami kita
        mereka akan sudah sedang bisa dapat harus juga tetapi atau karena jika apa mengapa
        kenapa bagaimana dimana kapan sekarang hari kemarin besok sangat lebih belum tersebut
        tolong terima kasih maaf mohon memori berkas layanan kesalahan masalah ruang ulang
        periksa cek tampilkan hapus pasang perbarui jalankan akses berjalan bantu""",
    "ms": """boleh sila awak kerana pelayan semak tidak anda maaf saya untuk ini itu dan yang""",
    "tl": """ang ng mga sa na ay at hindi ko mo siya kami tayo sila ito iyan po salamat paumanhin
        pakiusap ngayon""",
    "sv": """alltså något inget ingen alltid aldrig samma varje annan andra lite mycket många mindre bättre sämre ny nya första sista verkar enligt under medan fast nästan bara dagar timmar minuter vecka månad år fortfarande skulle kommer kunna måste gjort gång gånger okej ja nej absolut och i att det som en ett är var på för med inte jag du vi ni de har kan den till av om
        men eller så vad varför hur när här nu idag igår imorgon mycket också redan mig dig
        tack hej tyvärr ledsen ursäkta servern disken minnet fil loggen tjänsten fel problem
        utrymme starta om kontrollera kolla visa lista ta bort installera uppdatera kör
        åtkomst fungerar hjälpa finns""",
    "da": """altså noget intet ingen altid aldrig samme hver anden andre lidt mange mindre bedre værre ny nye første sidste synes ifølge mens næsten kun dage timer minutter uge måned år stadig ville vil kunne skal gjort gang gange okay ja nej og i at det som en et er var på for med ikke jeg du vi de har kan den til af om men
        eller så hvad hvorfor hvordan hvornår hvor her nu meget også allerede mig dig din dit
        tak hej beklager desværre undskyld serveren disken fil loggen fejl problem genstart
        kontroller tjek vis list slet installer opdater kør adgang fungerer hjælpe""",
    "nb": """altså noe ingenting ingen alltid aldri samme hver annen andre litt mange mindre bedre verre ny nye første siste ser ut ifølge mens nesten bare dager timer minutter uke måned år fortsatt ville vil kunne må gjort gang ganger greit ja nei og i at det som en et er var på for med ikke jeg du vi de har kan den til av om men
        eller så hva hvorfor hvordan når hvor her nå veldig også allerede meg deg din ditt
        takk hei beklager dessverre unnskyld serveren disken fil loggen feil problem start
        sjekk vis list slett installer oppdater kjør tilgang fungerer hjelpe""",
    "fi": """siis jotain mitään kukaan aina koskaan sama jokainen muu muut vähän paljon vähemmän parempi huonompi uusi ensimmäinen viimeinen näyttää mukaan aikana vaikka melkein vain päivää tuntia minuuttia viikko kuukausi vuosi vielä olisi tulee voivat täytyy tehty kerran kertaa okei kyllä ei selvä ja on ei se että kun mutta tai niin myös jo vielä minä sinä me te he olen olet ovat oli
        voi voitko voin en et tämä tätä se sitä mitä miksi missä milloin nyt tänään eilen
        huomenna kiitos hei anteeksi valitettavasti palvelin levy muisti tiedosto loki virhe
        ongelma tila käynnistä uudelleen tarkista näytä listaa poista asenna päivitä suorita
        pääsy toimii auttaa""",
    "cs": """byla bylo byly bez jsem jsi jsme jste takže něco nic nikdo vždy nikdy stejný každý jiný jiné málo hodně více méně lépe hůře nový nová první poslední zdá podle během zatímco ačkoli téměř jen dny hodin minut týden měsíc rok stále bylo bude mohou musí hotovo krát dobře jasně a v na je jsou byl se to že s z do o k pro ale jak co proč kde kdy ano ne teď dnes
        včera zítra velmi také už ještě mohu můžete můžeš mám máte nemám nemohu tento tato tuto
        toto prosím děkuji díky ahoj bohužel omlouvám promiňte paměť soubor chyba problém
        místo restartuj spusť znovu zkontroluj zobraz vypiš smaž nainstaluj aktualizuj
        provést přístup funguje pomoci""",
    "sk": """a v na je sú bol sa to že s z do o k pre ale ako čo prečo kde kedy áno nie teraz dnes
        veľmi aj už ešte môžem môžete mám nemám nemôžem tento táto túto toto prosím ďakujem
        ahoj bohužiaľ prepáčte pamäť súbor chyba problém miesto reštartuj spusti znova
        skontroluj zobraz vymaž nainštaluj aktualizuj vykonať prístup funguje pomôcť""",
    "ro": """deci ceva nimic nimeni mereu niciodată același fiecare alt alte puțin mult mulți mai bine rău nou nouă primul ultimul pare conform timpul deși aproape doar zile ore minute săptămână lună an încă deja ar fi va poate trebuie făcut dată dăți bine da nu sigur și în la de pe cu nu este sunt era a fost al ale o un pentru că ce care din sau dar mai
        foarte da acum azi ieri mâine pot poți puteți am ai are acest această îmi vă rog
        mulțumesc bună scuze îmi pare rău din păcate serverul disc memorie fișier jurnal eroare
        problemă spațiu repornește verifică arată listează șterge instalează actualizează
        execută acces funcționează rulează ajuta""",
    "hu": """tehát valami semmi senki mindig soha ugyanaz minden más kevés sok több kevesebb jobb rosszabb új első utolsó úgy tűnik szerint alatt közben bár majdnem csak nap óra perc hét hónap év még volna lesz lehet kell kész szer rendben oké persze a az és is egy nem van vagy de hogy mi mit miért hol mikor igen most ma tegnap holnap
        nagyon már még ez ezt azt tudom tudod tudja kérem köszönöm szia sajnos sajnálom
        elnézést szerver lemez memória fájl napló hiba probléma hely indítsd újra ellenőrizd
        mutasd listázd töröld telepítsd frissítsd végrehajtani hozzáférés működik segíteni""",
    "hr": """dakle nešto ništa nitko uvijek nikad isti svaki drugi malo puno više manje bolje gore novi nova prvi zadnji čini prema tijekom iako gotovo samo dana sati minuta tjedan mjesec godina još bilo bit će mogu mora gotovo puta dobro može i u na je su bio se da to za od do s sa ali ili kako što zašto gdje gde kada ne sada
        danas jučer sutra vrlo već još mogu možete imam nemam ovaj ova ovo molim hvala bok
        zdravo nažalost žao izvini oprostite memorija datoteka dnevnik greška problem prostor
        ponovno pokreni provjeri proveri prikaži popis obriši instaliraj ažuriraj izvršiti
        pristup radi pomoći""",
    "ca": """el la els les de del i és són no que per amb en es un una aquest aquesta però més
        molt també ja si ara avui ahir demà us plau gràcies servidor disc memòria reinicia
        comprova mostra puc pots""",
    "sw": """na ya wa kwa ni za la katika hii hiyo si sana tafadhali asante samahani siwezi""",
    "et": """ja on ei see et kui aga või ka veel mina sina meie teie nad olen oled oli saan saab ma sa
        me te palun aitäh tere vabandust kahjuks ketas mälu fail logi viga taaskäivita kontrolli
        näita kustuta paigalda uuenda juurdepääs töötab""",
    "lv": """un ir nav es tu mēs jūs viņi tas šis kas kā kāpēc kur kad bet vai arī jau vēl man tev
        var varu nevaru lūdzu paldies sveiki atvainojiet diemžēl serveris disks atmiņa fails
        žurnāls kļūda restartē pārbaudi parādi dzēs instalē atjaunini piekļuve darbojas""",
    "lt": """ir yra nėra aš tu mes jūs jie tai šis kas kaip kodėl kur kada bet ar taip pat jau dar man
        galiu negaliu prašau ačiū labas atsiprašau deja serveris diskas atmintis failas žurnalas
        klaida paleisk naujo patikrink parodyk ištrink įdiek atnaujink prieiga veikia""",
    "sl": """in je so ni jaz ti mi vi oni to ta kaj kako zakaj kje kdaj ampak ali tudi že še lahko
        morem prosim hvala zdravo oprostite žal strežnik pomnilnik datoteka dnevnik napaka
        znova zaženi preveri prikaži izbriši namesti posodobi dostop deluje""",
    "sq": """dhe është nuk unë ti ne ju ata ky kjo çfarë si pse ku kur por ose gjithashtu tashmë ende
        mund lutem faleminderit përshëndetje falni fatkeqësisht serveri disku memoria skedari
        regjistri gabim rinis kontrollo shfaq fshi instalo përditëso qasje punon""",
    "af": """en is nie ek jy ons julle hulle dit die wat hoe hoekom waar wanneer maar of ook al nog
        kan asseblief dankie hallo jammer ongelukkig bediener skyf geheue lêer fout herbegin
        kontroleer wys verwyder installeer toegang werk""",
    "is": """og er ekki ég þú við þið þeir það þetta hvað hvernig hvers vegna hvar hvenær en eða líka
        þegar enn get vinsamlegast takk halló afsakið því miður þjónn diskur minni skrá villa
        endurræsa athuga sýna eyða aðgangur virkar""",
    "eu": """eta da ez ni zu gu zuek haiek hau hori zer nola zergatik non noiz baina edo ere jada
        oraindik mesedez eskerrik asko kaixo barkatu zoritxarrez zerbitzaria diskoa fitxategia
        errorea berrabiarazi egiaztatu erakutsi ezabatu instalatu sarbidea dabil""",
    "ga": """agus tá níl mé tú sinn sibh siad seo sin cad conas cén fáth cá huair ach nó freisin
        cheana fós le do thoil go raibh maith agat dia duit brón orm drochuair freastalaí
        diosca cuimhne comhad earráid atosaigh seiceáil taispeáin scrios suiteáil rochtain""",
}

# Letters (and marks) that only some Latin-script languages use: a vote per occurrence.
LETTER_HINTS: dict[str, tuple[str, ...]] = {
    "ñ¿¡": ("es",), "ãõ": ("pt",), "ç": ("pt", "fr", "ca", "tr"), "ß": ("de",),
    "łąęśźżćń": ("pl",), "ğşı": ("tr",), "ășțâî": ("ro",), "őű": ("hu",), "řěů": ("cs",),
    "ďťľĺŕ": ("sk",), "đ": ("hr", "vi"), "ơưạảấầẩậắằẳặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ": ("vi",),
    "å": ("sv", "da", "nb"), "øæ": ("da", "nb"), "ėųį": ("lt",), "āēīūģķļņ": ("lv",),
    "èù": ("fr", "it", "ca"), "êëïœ": ("fr",), "ìò": ("it",),
}
_LETTER_HINT = {ch: langs for chars, langs in LETTER_HINTS.items() for ch in chars}
_HINT_CHARS = re.compile("[" + "".join(LETTER_HINTS) + "]")

# Closely related languages: a call between them is no evidence of a switch.
CLOSE = [
    {"es", "pt", "ca", "it", "gl"}, {"da", "nb", "sv", "no"}, {"ru", "uk", "bg", "sr", "be", "mk"},
    {"id", "ms", "tl"}, {"cs", "sk"}, {"hr", "sr", "sl", "bs"}, {"nl", "af"}, {"ar", "fa", "ur"},
    {"hi", "mr", "ne"},
]


def _build_index() -> dict[str, tuple[tuple[str, float], ...]]:
    votes: dict[str, dict[str, float]] = {}
    for word in ENGLISH_MARKERS:
        votes.setdefault(word, {})["en"] = 1.0
    for word in ENGLISH_WORDS:
        votes.setdefault(word, {}).setdefault("en", 0.5)
    for lang, words in LEXICONS.items():
        for word in words.split():
            votes.setdefault(word, {})[lang] = 1.0
    index = {}
    for word, langs in votes.items():
        if word in NEUTRAL:
            continue
        # a word shared by n languages gives each 1/n, except that English (by far the most
        # common language here) keeps half of a word it shares; one- and two-letter words count
        # half, unless they carry a diacritic ("är", "és", "że")
        size = 0.5 if len(word) <= 2 and word.isascii() else 1.0
        if "en" in langs and len(langs) > 1:
            share = {lang: (0.5 if lang == "en" else 0.5 / (len(langs) - 1)) for lang in langs}
        else:
            share = {lang: 1 / len(langs) for lang in langs}
        index[word] = tuple((lang, weight * size * share[lang]) for lang, weight in langs.items())
    return index


_INDEX = _build_index()

# ----------------------------------------------------------------------------- scripts
# (script, regex of its characters, characters per word unit, language or None)
_SCRIPTS: tuple[tuple[str, re.Pattern[str], float], ...] = tuple(
    (name, re.compile(f"[{chars}]"), per_unit)
    for name, chars, per_unit in (
        ("Han", "\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff\U00020000-\U0002a6df", 1.5),
        ("Kana", "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f", 2.5),
        ("Hangul", "\uac00-\ud7af\u1100-\u11ff\u3130-\u318f", 2.5),
        ("Cyrillic", "\u0400-\u052f", 6.0),
        ("Greek", "\u0370-\u03ff\u1f00-\u1fff", 6.0),
        ("Arabic", "\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff", 4.5),
        ("Hebrew", "\u0590-\u05ff", 4.5),
        ("Devanagari", "\u0900-\u097f", 4.0),
        ("Bengali", "\u0980-\u09ff", 4.5),
        ("Gurmukhi", "\u0a00-\u0a7f", 4.5),
        ("Gujarati", "\u0a80-\u0aff", 4.5),
        ("Tamil", "\u0b80-\u0bff", 6.0),
        ("Telugu", "\u0c00-\u0c7f", 6.0),
        ("Kannada", "\u0c80-\u0cff", 6.0),
        ("Malayalam", "\u0d00-\u0d7f", 7.0),
        ("Sinhala", "\u0d80-\u0dff", 5.0),
        ("Thai", "\u0e00-\u0e7f", 5.0),
        ("Lao", "\u0e80-\u0eff", 5.0),
        ("Myanmar", "\u1000-\u109f", 5.0),
        ("Khmer", "\u1780-\u17ff", 5.0),
        ("Georgian", "\u10a0-\u10ff", 7.0),
        ("Armenian", "\u0530-\u058f", 6.0),
        ("Ethiopic", "\u1200-\u137f", 4.0),
    )
)
_NON_LATIN = re.compile("[" + "".join(p.pattern[1:-1] for _, p, _ in _SCRIPTS) + "]")
_SCRIPT_LANGUAGE = {
    "Hangul": "ko", "Greek": "el", "Hebrew": "he", "Devanagari": "hi", "Bengali": "bn",
    "Gurmukhi": "pa", "Gujarati": "gu", "Tamil": "ta", "Telugu": "te", "Kannada": "kn",
    "Malayalam": "ml", "Sinhala": "si", "Thai": "th", "Lao": "lo", "Myanmar": "my", "Khmer": "km",
    "Georgian": "ka", "Armenian": "hy", "Ethiopic": "am",
}
_CJK = ("Han", "Kana", "Hangul")
_UKRAINIAN = re.compile("[іїєґІЇЄҐ]")
_BELARUSIAN = re.compile("[ўЎ]")
_SERBIAN = re.compile("[ђјљњћџЂЈЉЊЋЏ]")
_MACEDONIAN = re.compile("[ѓќѕЃЌЅ]")
_KAZAKH = re.compile("[әғқңөұүһӘҒҚҢӨҰҮҺ]")
_RUSSIAN_ONLY = re.compile("[ыэёЫЭЁ]")
_PERSIAN = re.compile("[پچژگکی]")
_URDU = re.compile("[ٹڈڑںےھ]")

LANGUAGE_NAMES = {
    "en": "English", "es": "Spanish", "fr": "French", "de": "German", "pt": "Portuguese",
    "it": "Italian", "nl": "Dutch", "pl": "Polish", "tr": "Turkish", "vi": "Vietnamese",
    "id": "Indonesian", "ms": "Malay", "sv": "Swedish", "da": "Danish", "nb": "Norwegian",
    "fi": "Finnish", "cs": "Czech", "sk": "Slovak", "ro": "Romanian", "hu": "Hungarian",
    "hr": "Croatian", "ca": "Catalan", "sl": "Slovene", "lt": "Lithuanian", "lv": "Latvian",
    "et": "Estonian", "ru": "Russian", "uk": "Ukrainian", "bg": "Bulgarian", "sr": "Serbian",
    "be": "Belarusian", "mk": "Macedonian", "kk": "Kazakh",
    "tl": "Tagalog", "sw": "Swahili", "af": "Afrikaans", "sq": "Albanian", "eu": "Basque",
    "ga": "Irish", "is": "Icelandic", "zh": "Chinese", "ja": "Japanese", "ko": "Korean",
    "el": "Greek", "he": "Hebrew", "hi": "Hindi", "bn": "Bengali", "th": "Thai", "ka": "Georgian",
    "hy": "Armenian", "ta": "Tamil", "am": "Amharic", "ar": "Arabic", "fa": "Persian", "ur": "Urdu",
    "pa": "Punjabi", "gu": "Gujarati", "te": "Telugu", "kn": "Kannada", "ml": "Malayalam",
    "si": "Sinhala", "lo": "Lao", "my": "Burmese", "km": "Khmer",
}

# How users name a language when they ask for it ("answer in French", "auf Englisch",
# "翻译成英文"): English name, own name, and its name in a few widely used languages.
LANGUAGE_REQUEST_NAMES = {
    "en": r"english|ingl[eéê]s|anglais|englisch|inglese|engels|angielsk|ingilizce|ti[eế]ng anh|inggris|engelsk|englanti|anglick|англи|英文|英语|英語|영어|الإنجليزي|انجليزي|אנגלית|अंग्रेज|อังกฤษ",
    "es": r"spanish|espa[nñ]ol|castellano|spanisch|espagnol|spagnolo|espanhol|spaans|hiszpa|ispanyol|t[aâ]y ban nha|spanyol|spansk|испан|西班牙|スペイン|스페인",
    "fr": r"french|fran[cç]ais|franz[oö]sisch|franc[eé]s|francese|franc[eê]s|frans|francus|fransız|ti[eế]ng ph[aá]p|prancis|franska|fransk|француз|法语|法文|法語|フランス|프랑스",
    "de": r"german|deutsch|alem[aá]n|allemand|tedesco|alem[aã]o|duits|niemieck|almanca|ti[eế]ng [dđ][uứ]c|jerman|tyska|tysk|немец|німец|德语|德文|德語|ドイツ|독일",
    "pt": r"portugu|portugies|portoghese|portugees|portugalsk|portekiz|португал|葡萄牙|ポルトガル|포르투갈",
    "it": r"italian|italiano|italienisch|italien|italiaans|w[łl]osk|italyan|итальян|意大利|イタリア|이탈리아",
    "nl": r"dutch|nederlands|niederl[aä]ndisch|holl[aä]ndisch|n[eé]erlandais|neerland[eé]s|olandese|holand[eê]s|flemish|vlaams|нидерланд|голланд|荷兰|荷蘭|オランダ|네덜란드",
    "pl": r"polish|polski|polsku|polnisch|polonais|polaco|polacco|polon[eê]s|pools|польск|波兰|波蘭|ポーランド|폴란드",
    "ru": r"russian|русск|russisch|russe|ruso|russo|rosyjsk|rus[cç]a|ti[eế]ng nga|ryska|russisk|俄语|俄文|俄語|ロシア|러시아",
    "uk": r"ukrain|українськ|украинск|ucrania|ucraino|ukrai[nń]sk|乌克兰|烏克蘭|ウクライナ|우크라이나",
    "zh": r"chinese|mandarin|cantonese|中文|汉语|漢語|华语|華語|普通话|普通話|國語|中国語|chinesisch|chinois|chino|cinese|chin[eê]s|chinees|chi[nń]sk|китайск|[cç]ince|ti[eế]ng trung|중국어|tionghoa",
    "ja": r"japanese|日本語|japanisch|japonais|japon[eé]s|giapponese|japon[eê]s|japans|japo[nń]sk|японск|japonca|ti[eế]ng nh[aậ]t|jepang|일본어|日语|日文",
    "ko": r"korean|한국어|한국말|koreanisch|cor[eé]en|coreano|koreaans|korea[nń]sk|корейск|korece|ti[eế]ng h[aà]n|韩语|韓語|韓国語|韩文",
    "ar": r"arabic|عربي|العربية|arabisch|arabe|[aá]rabe|arabo|arabsk|арабск|arap[cç]a|阿拉伯|アラビア|아랍",
    "he": r"hebrew|עברית|hebr[aä]isch|h[eé]breu|hebreo|ebraico|hebraico|иврит|希伯来|ヘブライ|히브리",
    "hi": r"hindi|हिन्दी|हिंदी|印地",
    "th": r"\bthai\b|ภาษาไทย|ไทย|泰语|泰語|タイ語|태국어",
    "tr": r"turkish|t[uü]rk[cç]e|t[uü]rkisch|\bturc\b|turco|turks|turecki|турецк|土耳其|トルコ|터키",
    "vi": r"vietnam|ti[eế]ng vi[eệ]t|越南|ベトナム|베트남",
    "id": r"indonesia|indon[eé]si|印尼|インドネシア|인도네시아",
    "ms": r"malay|melayu|马来|マレー",
    "sv": r"swedish|svenska|schwedisch|su[eé]dois|sueco|svedese|zweeds|szwedzk|шведск|瑞典|スウェーデン|스웨덴",
    "da": r"danish|dansk|d[aä]nisch|danois|dan[eé]s|danese|deens|du[nń]sk|датск|丹麦|デンマーク",
    "nb": r"norwegian|norsk|norwegisch|norv[eé]gien|noruego|norvegese|noors|norwesk|норвеж|挪威|ノルウェー",
    "fi": r"finnish|suome|finnisch|finnois|finland[eé]s|finlandese|\bfins\b|fi[nń]sk|финск|芬兰|フィンランド",
    "cs": r"czech|[cč]e[sš]tin|[cč]esky|tschechisch|tch[eè]que|checo|ceco|tsjechisch|czesk|чешск|捷克|チェコ",
    "sk": r"slovak|sloven[cč]in|slowakisch|eslovaco",
    "el": r"greek|ελληνικ|griechisch|\bgrec\b|griego|greco|grego|grieks|greck|греческ|希腊|希臘|ギリシャ|그리스",
    "ro": r"romanian|rom[aâ]n[aăe]|rum[aä]nisch|roumain|rumano|rumeno|roemeens|rumu[nń]sk|румынск|罗马尼亚|ルーマニア",
    "hu": r"hungarian|magyar|ungarisch|hongrois|h[uú]ngaro|ungherese|hongaars|w[eę]giersk|венгерск|匈牙利|ハンガリー",
    "bg": r"bulgarian|български|bulgarisch|bulgare|b[uú]lgaro",
    "sr": r"serbian|српск|srpsk|serbisch|serbe|serbio",
    "hr": r"croatian|hrvatsk|kroatisch|croate|croata",
    "fa": r"persian|farsi|فارسی|persisch|persan|persa",
    "ur": r"urdu|اردو",
    "bn": r"bengali|bangla|বাংলা",
    "ca": r"catalan|catal[aà]|katalanisch",
    "tl": r"tagalog|filipino",
}
_REQUEST_NAME = {lang: re.compile(pattern, re.I) for lang, pattern in LANGUAGE_REQUEST_NAMES.items()}
_TRANSLATE = re.compile(
    r"translat|traduc|tradu[zi]|traduis|[uü]bersetz|vertaal|t[łl]umacz|перев[оеі]д|переклад|翻译|翻譯|翻訳|번역|"
    r"[cç]evir|d[iị]ch|terjemah|[oö]vers[aäæ]tt|overs[aæ]t|k[aä][aä]nn[aä]|p[rř]elo[zž]|ترجم|תרגם",
    re.I,
)


@dataclass(frozen=True)
class Detection:
    language: str  # ISO 639-1
    confidence: float
    method: str  # "script", "stopwords", "lexicon", "lingua"

    @property
    def name(self) -> str:
        return LANGUAGE_NAMES.get(self.language, self.language)


@dataclass
class Profile:
    """Evidence for each language in a text: word-list votes and script units."""

    units: float = 0.0  # word units of prose
    latin_letters: int = 0
    scores: dict[str, float] = field(default_factory=dict)  # language -> votes (+ script units)
    voters: list[str] = field(default_factory=list)  # the words that voted, in order

    def distinct_words(self, language: str) -> int:
        """How many different words voted for `language` or a language close to it."""
        close = _close_to(language)
        return len({w for w in self.voters if any(lang in close for lang, _ in _INDEX[w])})

    def family_score(self, language: str) -> float:
        close = _close_to(language)
        return sum(v for k, v in self.scores.items() if k in close)

    def best(self) -> tuple[str | None, float, float]:
        """(language, its family's score, best score of any language outside the family)."""
        scores = self.scores
        if not scores:
            return None, 0.0, 0.0
        lang = max(scores, key=scores.__getitem__)
        family = _FAMILY.get(lang)
        other = 0.0
        if family is None:  # a family of its own (English, most scripts): no sum to make
            for k, v in scores.items():
                if v > other and k != lang:
                    other = v
            return lang, scores[lang], other
        own = 0.0
        for k, v in scores.items():
            if _FAMILY.get(k) == family:
                own += v
            elif v > other:
                other = v
        return lang, own, other


# Each language grouped in CLOSE with the languages close to it (itself included).
_CLOSE_TO: dict[str, frozenset[str]] = {}
for _group in CLOSE:
    for _lang in _group:
        _CLOSE_TO[_lang] = _CLOSE_TO.get(_lang, frozenset()) | _group


def _close_to(language: str) -> frozenset[str] | tuple[str]:
    return _CLOSE_TO.get(language, (language,))


def is_close(a: str, b: str) -> bool:
    return b in _close_to(a)


# One family per language for the hot path (a language in two groups, like Serbian, takes its first).
_FAMILY: dict[str, int] = {}
for _i, _group in enumerate(CLOSE):
    for _lang in _group:
        _FAMILY.setdefault(_lang, _i)


def _without_code(text: str) -> str:
    if "```" in text or "~~~" in text or "<think" in text:
        text = _CODE_BLOCK.sub(" ", text)
    return _without_snippets(text[: ANALYSE_CHARS + 300])


def _without_snippets(text: str) -> str:
    if "`" in text:
        text = _INLINE_CODE.sub(" ", text)
    if ">" in text:
        text = _QUOTED_LINE.sub(" ", text)
    return text


def _without_quotes(text: str) -> str:
    """Quoted strings removed, unless the text is mostly quotation (a translation, a banner)."""
    if not ('"' in text or "“" in text or "„" in text or "«" in text or "「" in text or "『" in text):
        return text
    stripped = _QUOTED.sub(" ", text)
    return stripped if len(stripped.split()) * 3 >= len(text.split()) else text


def prose(text: str, *, drop_quotes: bool = False) -> str:
    """Text with code, URLs, paths and technical tokens removed: what is left is language."""
    text = _without_code(text)
    if drop_quotes:
        text = _without_quotes(text)
    return _TECH_TOKEN.sub(" ", text)[:ANALYSE_CHARS]


def _chunks(text: str, size: int) -> list[str]:
    """The pieces of `text` that are read: about `size` characters each, cut at whitespace,
    as many as start within the first ANALYSE_CHARS characters."""
    if len(text) <= size:  # most messages: one piece, no loop
        return [text] if text else []
    pieces = []
    start, end = 0, len(text)
    while start < end and start < ANALYSE_CHARS:
        stop = start + size
        if stop < end:
            space = text.find(" ", stop)
            stop = end if space < 0 else space
        pieces.append(text[start:stop])
        start = stop
    return pieces


def _cyrillic_language(text: str) -> str:
    if _UKRAINIAN.search(text) and not _RUSSIAN_ONLY.search(text):
        return "be" if _BELARUSIAN.search(text) else "uk"
    if _SERBIAN.search(text):
        return "mk" if _MACEDONIAN.search(text) else "sr"
    if _KAZAKH.search(text):
        return "kk"
    if not _RUSSIAN_ONLY.search(text) and text.count("ъ") + text.count("Ъ") >= 2:
        return "bg"
    return "ru"


def _arabic_language(text: str) -> str:
    if _URDU.search(text):
        return "ur"
    return "fa" if len(_PERSIAN.findall(text)) >= 2 else "ar"


CHUNK_CHARS = 400
# Evidence at which reading stops early: this many votes, this many times any other family's.
DECIDED_SCORE, DECIDED_MARGIN = 8.0, 4.0


def profile(text: str | None, *, drop_quotes: bool = True) -> Profile:
    """Evidence per language in `text` (prose only). Never calls Lingua.

    Reads at most ANALYSE_CHARS characters of prose, chunk by chunk, and stops as soon as one
    language family has clearly won (a long English reply costs about one chunk).
    """
    result = Profile()
    if not text:
        return result
    if "```" in text or "~~~" in text or "<think" in text:
        text = _CODE_BLOCK.sub(" ", text)  # code, and reasoning blocks some models emit
    base = text[: ANALYSE_CHARS + 300]
    if not base.isascii() and _NON_LATIN.search(base):
        # other scripts: clean the whole window once and count their units first
        base = _without_snippets(base)
        if drop_quotes:
            base = _without_quotes(base)
        if "/" in base or "@" in base or "=" in base or "_" in base or "\\" in base:
            base = _PATHLIKE.sub(" ", base)
        _score_scripts(base[:ANALYSE_CHARS], result)
        clean = False
    else:
        clean = True
    chunks = _chunks(base, CHUNK_CHARS)
    last = len(chunks) - 1
    for i, chunk in enumerate(chunks):
        if clean:
            chunk = _without_snippets(chunk)
            if drop_quotes:
                chunk = _without_quotes(chunk)
        _score_words(chunk, result)
        if i == last:
            break  # nothing left to read: no need to ask whether to stop
        lang, own, other = result.best()
        if own >= DECIDED_SCORE and own >= DECIDED_MARGIN * other:
            break
    return result


def _script_units(cleaned: str) -> dict[str, float]:
    counts: dict[str, int] = {}
    for ch in _NON_LATIN.findall(cleaned):
        counts[ch] = counts.get(ch, 0) + 1
    units: dict[str, float] = {}
    for ch, n in counts.items():
        for script, pattern, per_unit in _SCRIPTS:
            if pattern.match(ch):
                units[script] = units.get(script, 0.0) + n / per_unit
                break
    return units


def _score_scripts(cleaned: str, result: Profile) -> None:
    scores = result.scores
    script_units = _script_units(cleaned)
    if not script_units:
        return
    cjk = sum(script_units.get(s, 0.0) for s in _CJK)
    if cjk:
        kana = script_units.get("Kana", 0.0)
        hangul = script_units.get("Hangul", 0.0)
        han = script_units.get("Han", 0.0)
        if hangul >= han and hangul >= kana:
            lang = "ko"
        elif kana * 2.5 >= max(1.0, 0.1 * (han * 1.5 + kana * 2.5)):
            lang = "ja"
        else:
            lang = "zh"
        scores[lang] = scores.get(lang, 0.0) + cjk
    for script, units in script_units.items():
        if script in _CJK:
            continue
        if script == "Cyrillic":
            lang = _cyrillic_language(cleaned)
        elif script == "Arabic":
            lang = _arabic_language(cleaned)
        else:
            lang = _SCRIPT_LANGUAGE[script]
        scores[lang] = scores.get(lang, 0.0) + units
    result.units += sum(script_units.values())


def _score_words(cleaned: str, result: Profile) -> None:
    lowered = cleaned.lower()
    if lowered.isascii():
        _score_ascii_words(lowered, result)
        return
    scores = result.scores
    index = _INDEX
    words = 0
    for word in _PROSE_WORD.findall(lowered):
        if not word.isascii():
            if _NON_LATIN.search(word):
                continue  # counted by script
            word = word.replace("’", "'")
            for ch in _HINT_CHARS.findall(word):
                langs = _LETTER_HINT[ch]
                for lang in langs:
                    scores[lang] = scores.get(lang, 0.0) + 0.5 / len(langs)
        words += 1
        result.latin_letters += len(word)
        votes = index.get(word)
        if votes:
            result.voters.append(word)
            for lang, weight in votes:
                scores[lang] = scores.get(lang, 0.0) + weight
    if "¿" in cleaned or "¡" in cleaned:
        scores["es"] = scores.get("es", 0.0) + 1.0
    result.units += words


def _score_ascii_words(lowered: str, result: Profile) -> None:
    """`_score_words` for lowered ASCII text: no letter hints, no other scripts, no ¿ ¡, so
    counting and picking the voters is left to C. The votes are still added one by one in text
    order: the weights (1/12, 0.05, 0.1 …) are not exact in binary, so the sums (and the decisions
    taken on them, e.g. `>= 1.0`) depend on the order of the additions."""
    words = _ASCII_PROSE_WORD.findall(lowered)
    if not words:
        return
    result.units += len(words)
    result.latin_letters += sum(map(len, words))
    index = _INDEX
    voters = list(filter(index.__contains__, words))
    result.voters += voters
    scores = result.scores
    get = scores.get
    for lang, weight in chain.from_iterable(map(index.__getitem__, voters)):
        scores[lang] = get(lang, 0.0) + weight


@functools.cache
def _detector():
    from lingua import IsoCode639_1, Language, LanguageDetectorBuilder

    languages = [Language.from_iso_code_639_1(getattr(IsoCode639_1, c.upper())) for c in LINGUA_LANGUAGES]
    return LanguageDetectorBuilder.from_languages(*languages).with_low_accuracy_mode().build()


def _lingua(text: str) -> Detection | None:
    words = " ".join(w.lower() for w in _LETTER_RUN.findall(prose(text, drop_quotes=True)))
    values = _detector().compute_language_confidence_values(words)
    if not values:
        return None
    best = values[0].language.iso_code_639_1.name.lower()
    # close languages share the confidence (Swedish/Danish/Norwegian text splits it three ways)
    confidence = sum(float(v.value) for v in values if is_close(v.language.iso_code_639_1.name.lower(), best))
    return Detection(best, min(1.0, confidence), "lingua")


def detect(
    text: str | None, *, min_letters: int = MIN_LETTERS, lingua_min_letters: int = LINGUA_MIN_LETTERS,
    min_units: float = MIN_UNITS, min_score: float = 1.5, margin: float = 2.0, running_text: bool = True,
) -> Detection | None:
    """The language of `text`, or None when there is too little prose or evidence to tell.

    `min_units` is how many word units of prose are needed (a Latin word is one unit; see the
    module docstring); `lingua_min_letters` how many letters of Latin prose the statistical
    detector needs when the word lists cannot decide; `min_score` and `margin` how many word-list
    votes the winning language needs, and by how much it must beat any unrelated language;
    `running_text` asks for several different function words of a non-English language (a
    reply), where a short user message may be decided by a single word ("danke", "gracias").
    `min_letters` is accepted for compatibility and only used as a floor for Lingua.
    """
    return decide(profile(text), text, min_letters=min_letters, lingua_min_letters=lingua_min_letters,
                  min_units=min_units, min_score=min_score, margin=margin, running_text=running_text)


def decide(
    prof: Profile, text: str | None, *, min_letters: int = MIN_LETTERS,
    lingua_min_letters: int = LINGUA_MIN_LETTERS, min_units: float = MIN_UNITS,
    min_score: float = 1.5, margin: float = 2.0, running_text: bool = True,
) -> Detection | None:
    """`detect` on an already computed profile of `text` (see `detect` for the parameters)."""
    if prof.units < min_units:
        return None
    lang, own, other = prof.best()
    if lang is not None:
        script_lang = lang not in LEXICONS and lang != "en"
        if script_lang and own >= max(min(1.0, min_units), 0.4 * prof.units) and own >= 1.5 * other:
            return Detection(lang, min(0.99, 0.7 + 0.3 * own / prof.units), "script")
        if not script_lang and own >= min_score and own >= margin * other and (
            lang == "en" or not running_text or _prose_like(prof, lang)
        ):
            method = "stopwords" if lang == "en" else "lexicon"
            return Detection(lang, min(0.99, 0.6 + 0.4 * own / (own + other + 1)), method)
    english = prof.scores.get("en", 0.0)
    foreign = max((prof.family_score(k) for k in prof.scores if k != "en"), default=0.0)
    if (
        prof.latin_letters >= max(lingua_min_letters, min_letters)
        and prof.latin_letters * 2 >= prof.units
        and foreign >= 1.0  # the word lists saw some other language …
        and not (english >= 1.0 and english >= foreign)  # … and English does not lead: data, not a foreign text
    ):
        found = _lingua(text or "")
        # trust Lingua only where the word lists saw at least a trace of its language
        if found is not None and prof.family_score(found.language) > 0 and (
            prof.units <= 12 or prof.distinct_words(found.language) >= 2
        ):
            if prof.family_score(found.language) >= 1.0:  # two signals agree
                return Detection(found.language, min(1.0, found.confidence + 0.2), "lingua")
            return found
    return None


def _prose_like(prof: Profile, language: str) -> bool:
    """Enough different function words of `language` for running text, not a list of names
    ("DejaVu Sans Mono", "E E E" columns) that happens to contain one of its words."""
    needed = 1 if prof.units <= 3 else 2 if prof.units <= 6 else 3
    return prof.distinct_words(language) >= needed and prof.family_score(language) >= 0.1 * prof.units


def _lingua_family(text: str) -> dict[str, float]:
    """Lingua's confidence per language for `text` (prose words only)."""
    words = " ".join(w.lower() for w in _PROSE_WORD.findall(prose(text, drop_quotes=True)))
    if not words:
        return {}
    return {
        v.language.iso_code_639_1.name.lower(): float(v.value)
        for v in _detector().compute_language_confidence_values(words)
    }


def guess_short(text: str, prof: Profile) -> Detection | None:
    """The language of a short message the word lists could not decide ("O backup terminou?",
    "Yedekleme bitti mi?"): asked of Lingua only when no word in it is English, at least two
    words are not borrowed technical vocabulary, and Lingua is nearly certain."""
    if prof.scores.get("en", 0.0) > 0 or prof.latin_letters < 10 or prof.units > 12:
        return None
    words = [w.lower() for w in _PROSE_WORD.findall(prose(text, drop_quotes=True))]
    if sum(1 for w in words if w not in NEUTRAL and len(w) > 1) < 2:
        return None
    values = _lingua_family(text)
    if not values or values.get("en", 0.0) >= 0.05:
        return None
    best = max(values, key=values.__getitem__)
    confidence = sum(v for k, v in values.items() if is_close(k, best))
    return Detection(best, confidence, "lingua") if confidence >= 0.9 else None


def could_be(text: str, prof: Profile, language: str) -> bool:
    """Might a short message without English words be in `language`? (Lingua, generous.)"""
    if prof.scores.get("en", 0.0) > 0 or prof.latin_letters < 4 or language not in LINGUA_LANGUAGES:
        return False
    values = _lingua_family(text)
    return sum(v for k, v in values.items() if is_close(k, language)) >= 0.3


def evidence(prof: Profile, language: str) -> float:
    """How much `prof` speaks for `language` (or a language close to it)."""
    return prof.family_score(language)


def requested_language(text: str | None, language: str) -> bool:
    """Does `text` (a user message) ask for `language`, or for a translation?"""
    if not text:
        return False
    pattern = _REQUEST_NAME.get(language)
    if pattern is not None and pattern.search(text):
        return True
    return bool(_TRANSLATE.search(text))


def confidence_for(text: str, language: str) -> float:
    """Lingua's confidence that `text` is in `language` (0 when it is not among LINGUA_LANGUAGES)."""
    if language not in LINGUA_LANGUAGES:
        return 0.0
    from lingua import IsoCode639_1, Language

    lang = Language.from_iso_code_639_1(getattr(IsoCode639_1, language.upper()))
    words = " ".join(w.lower() for w in _LETTER_RUN.findall(prose(text)))
    return float(_detector().compute_language_confidence(words, lang))
