"""The Outcome of a session: achieved, partial, failed, handed-off, abandoned or unknown, read from
how the conversation ends (docs/outcome.md, "How the outcome is decided": `decide_outcome`'s
docstring is that page's rule), with the one line that says why and the message it rests on."""

from __future__ import annotations

from datetime import timedelta
from typing import NamedTuple

from .ending import (
    ANSWERED,
    BLANK,
    CAVEAT,
    COMPLETED,
    CONVERSATION_ROLES,
    CUT,
    DEFAULT_GRACE,
    ERROR,
    HANDED_OFF,
    NOTHING_LEFT,
    USER,
    WAITING,
    is_finishing,
    turn_block,
)
from .final_words import USER_SOLVED, asks_for, asks_leave, came_up_empty, left_chat, reports_failure
from .final_words import announced as announced_step
from .final_words import contradicted as claim_contradicted
from .model import Message, Session
from .rule import Finding, Severity
from .text.closings import OFFER
from .text.frustration import REPLY_TAIL, cue_tables, own_words
from .text.prose import canonical

REPEATED_DOUBTS = 2  # statements in the last turn admitting an unverified result that make it partial
# user-frustration's phrase reading that says the agent's last step did not work (its [failed] table)
STILL_FAILING = ("failure-report",)
CLAIMED = "claimed"  # text.frustration's reply cue table: the agent says it did or fixed it


class Outcome:
    ACHIEVED = "achieved"
    FAILED = "failed"
    PARTIAL = "partial"
    HANDED_OFF = "handed-off"  # the agent handed the conversation to a person or another agent
    ABANDONED = "abandoned"  # the user gave the task up ("forget it") or stopped answering; a ^C cut-off stays partial/failed
    UNKNOWN = "unknown"

    ALL = (ACHIEVED, FAILED, PARTIAL, HANDED_OFF, ABANDONED, UNKNOWN)
    SYMBOL = {ACHIEVED: "✅", FAILED: "❌", PARTIAL: "⚠️", HANDED_OFF: "🤝", ABANDONED: "🚪", UNKNOWN: "❔"}


class Verdict(NamedTuple):
    """An outcome, the one line that says why, and the id of the message it rests on (None only
    when the session has no message)."""

    outcome: str
    reason: str
    message: int | None
    kind: str = ""  # which step of the decision applied (ENDING_KINDS): what unexplained failures group by


def decide_outcome(session: Session, findings: list[Finding], grace: timedelta = DEFAULT_GRACE) -> str:
    """achieved / failed / partial / handed-off / abandoned / unknown, from how the conversation ends, not from which text rules fired.

    The *ending* is the last user, assistant or tool message (system messages are ignored, but
    the client's messages after it are read). The *final words* are the last turn's last three
    text replies, read sentence by sentence. A *finishing call* is `complete_task` or a submit
    step: a tool named `submit`, `finish`, `attempt_completion`, ..., a command carrying a
    submit marker (`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`), or the last call of a session
    whose status is `completed` (the harness ended the run on it; when its result was stored,
    the call's own text says it submits, as mini-swe-agent's "I am ready to submit." does). The
    last turn *did work* when it has a tool call other than a finishing one, or the client
    reports a change applied ("Applied edit to src/app.py"). An *earlier answer* is
    a text reply ending an earlier turn that does not say it could not do it (a turn whose
    last assistant message is an error card has none: "Let me check the logs." before the card
    only announced the work the card cut off; nor has a turn whose answer only waits for the
    user, "Please add these files to the chat", and that did no work). *Record
    findings* are findings of rules that read the platform's records (audit log, plans,
    executions: blocked-action, orphaned-approval, plan-step-order), and the blocker findings of
    the rules that read the tool record (failing-loop whose tool still fails at the end of its
    turn, tool-error-ignored whose reply claims success, success-contradicted); findings of the
    text rules (cant-run, user-frustration, tool-fanout, ...) never move the outcome, but for
    user-frustration's failure reports at the very end (step 20). Phrases:
    nomos_forensics/text/lexicons/endings.toml. The first of these that applies decides:

    1. unknown: no user message (nothing was asked). A sub-agent's run whose prompt was not
       stored (a Claude Code sidechain exported without it) lands here too: its report may read
       as done, but without the request there is nothing to judge it against.
    2. unknown: status `active` and the last message is younger than `grace-minutes`
       (default 10; still running).
    3. failed: status `failed`, or the request never got an assistant message.
    4. failed: a blocker record finding (an action blocked or denied, a tool failing to the
       end of the turn, a success the tool results contradict) has evidence in the last turn
       and no work follows it in that turn.
    5. abandoned: the whole of the last request gives the task up ("forget it", "never mind,
       I'll do it myself", "stop", "算了", "забудь"), whatever the agent said after it. Also
       abandoned when the user stopped answering: the final reply closes the chat for lack of a
       reply ("Parece que você está ocupado agora, então vou fechar o chat", "Ich werde diesen
       Chat jetzt schließen, da ich keine Antwort erhalten habe") right after asking the user
       something or whether they were still there ("Você ainda está comigo?"), and the user's
       last message had not closed ("ok, I'll try it, thanks") or said it works ("já consegui").
    6. the ending is an assistant error card, a blank reply, an unanswered user message (a
       closing after a finished answer excepted: a bare thank-you or acknowledgement, "exit", or
       a message under 200 characters that thanks, says goodbye or that the user will come back
       later, "thanks, that's all", "ok I'll check and get back to you", "спасибо, всё понятно",
       and asks for nothing more: no question, no "please", "also", "but", "still") or a reply
       the user cut off (the client logged its interrupt right before the reply, aider's "^C
       again to exit", or right before the token report of a model call after it; not a ^C at
       the prompt after a finished reply, and not a cut reply to a closing, where the closing
       ends the session): partial after an earlier answer (work was delivered before the last
       request died), else failed.
    7. partial: the ending is a tool result or a tool call nobody answered, and no finishing
       call (cut off while working). When the client then logged that the user stopped the
       agent or left ("[Request interrupted by user for tool use]", Claude Code's /exit), the
       reason says so: the user's stop, not a dropped stream to resume.
    8. partial: status `cancelled`, no finishing call and status not `completed`.
    9. the client reports after the last reply that its change was not applied and it stopped
       ("Only 3 reflections allowed, stopping."): partial after an earlier answer, else failed.
       Failed when the last turn applied a change and the client then reports the user's undo
       of a commit ("Removed: 57d34c8 feat: Add heatmap … Now at: c4ca116 …", aider's /undo),
       and the last request is not a question: the user took the result back. After a question
       ("Can you recommend any improvement?") the answer stands; the undo takes back only the
       edit that came with it.
    10. handed-off: the last tool round hands off to a person and its stored result is no error
        (`transfer_to_human_agents`, `escalate`, ...), or the final words of an answer hand the
        conversation over ("I'm transferring you to a human agent", "I have escalated your case
        to our billing team", "a specialist will contact you", "encaminharei seu caso para um
        departamento diferente", "ich habe Ihr Anliegen an die Fachabteilung weitergeleitet";
        not a question, "Would you like me to transfer you?"). A hand-off may be the right
        step; it is never `achieved`.
    11. the final words say it could not do something ("I can't run the build", "no local
        knowledge on that", "无法执行", "Lamento, mas não temos centro de reparos"): partial when
        work follows that statement in the last turn (or the turn did work and ends on a
        finishing call), else failed. Not when they say nothing is left to do ("there are no
        tasks marked with [ ]"), state a fact about the code ("X is a float, so we can't use it
        directly") or go on to do it ("no local knowledge on that, so I'll fetch it").
    12. failed: the final words wait for the user to supply something ("I'll wait for you to
        share the files", "please share the relevant files", "could you please clarify: …", "to
        process this refund, I need some additional information: …", "Once you provide these
        details, I can …"), the last turn did no work and nothing is left to do.
    13. the final reply's last sentence announces the agent's own next step ("Now, I need to add
        her to the 'general' channel.", "I will post the summary using send_channel_message.",
        "Let me check the logs.", "Estou a verificar os detalhes.") and nothing follows it but
        a closing offer ("I will send £98.70 to the IBAN …. Is there anything else I can help
        you with?"): the agent stopped mid-task. Partial when the last turn did work, else
        failed. Not an offer ("let me know if …"), a question, a conditional ("If you want, I
        can …"), nor an answer the user closed after. Also partial: the last turn did work, its final reply says a
        lookup found nothing ("It seems there is no existing grocery list in the cloud drive",
        "I couldn't find the document") and ends by handing a question back to the user ("Would
        you like me to create one?", "Could you please provide more details?"; not an offer of
        more help): it stopped empty-handed, and nobody answered.
    14. partial: the final words admit the result is unverified or incomplete ("the test has
        issues but ...", "beyond what I can easily test", "it should fix the issue, but it
        doesn't", a summary whose own figures say it is not done: "50 tests (43 passing)", "7
        of 50 tests failing", "left untested"), or the last turn's replies admit it twice or
        more, anywhere ("I can't run it without numpy/pandas", ..., "Actually, I can't run it
        without numpy/pandas"; "we haven't
        actually reproduced the original error", ..., "I need to give up on reproducing it").
    15. partial: any other record finding of severity friction or blocker (finished, but an
        approval was left pending, a plan step skipped, a block worked around).
    16. achieved: the final words say nothing is left to do, and the last turn did no work.
    17. achieved: a finishing call (`complete_task` whose result is no error, or a submit
        step), or status `completed`.
    18. unknown: the final reply is a short question (under 300 characters, ending in "?") in
        a turn where the agent called no tool: it is waiting on the user. Not the agent's
        closing offer ("Is there anything else I can help you with?"), which needs no answer.
        Also unknown, tools called or not: the closing question asks leave to do what the
        request asked ("go ahead and make a reservation" answered "Would you like me to make a
        reservation?"; not an offer of something else), or asks the user for what the agent
        needs to go on ("Could you please specify which email address I should use?", "How
        would you like to adjust your rent payment?"; not "What else would you like me to do?").
    19. partial: the final reply says the task is done ("Your flight has been booked", "I've
        updated the file", "Done!"), admits no problem (no "error", "failed", "unfortunately",
        "but", ...), and the last tool result before it in its turn is an error: the claim
        does not hold. Not an error of a coding client's general shell (`Bash`, `shell`,
        `execute_command`, ...), where a failed probe ("tool --version") is common. When that
        error is there and the final reply says so ("I received an error message saying that
        the channel was not found. Please check the name and try again."), the action did not
        happen: partial after an earlier answer, else failed.
    20. partial: one of the user's last two requests (a closing aside) says the agent's last
        step did not work, as user-frustration's failure reports read it ("Es hat nicht
        funktioniert.", "Já fiz isso", "same error again", "nada" right after what to try), and
        no reply after it says it was done or fixed ("I've fixed", "Ich habe die eBooks
        hinzugefügt", "corrigido": text.frustration's reply table `claimed`), nor does the user
        say after it that it works now ("Agora apareceu! Finalmente!", "hat geklappt": the
        endings' `user_solved`): the problem was still open when the conversation ended,
        thanks or not. Not a correction ("that's not what I asked"), which the next reply
        answers. The one text reading the Outcome takes; with user-frustration disabled this
        step never applies.
    21. achieved: the final reply answers with text (or the user closed after it, step 6).

    Every outcome's reason quotes the message it rests on (the agent's answer or confirmation,
    the user's closing or give-up, the error card, the final words read), and the card's
    `outcome_message` is that message's id.

    Cosmetic findings never change the outcome.
    """
    return explain_outcome(session, findings, grace)[0]


def explain_outcome(
    session: Session, findings: list[Finding], grace: timedelta = DEFAULT_GRACE
) -> tuple[str, str]:
    """(outcome, why): `decide_outcome`'s answer and the one line that says what in the ending decided it."""
    return verdict(session, findings, grace)[:2]


def verdict(session: Session, findings: list[Finding], grace: timedelta = DEFAULT_GRACE) -> Verdict:
    """`decide_outcome`'s answer, the one line that says what in the ending decided it (quoting
    the message it rests on), and that message's id."""
    messages = session.messages
    if not any(m.role == "user" for m in messages):
        return Verdict(Outcome.UNKNOWN, "no user message", messages[-1].id if messages else None, kind="no-user-message")
    ending = session.ending
    last = ending.last
    if ending.in_flight(grace):
        return Verdict(Outcome.UNKNOWN, f"still running: status active and the last message (turn {last.turn}) is recent",
                       last.id, kind="still-running")
    if ending.status == "failed":
        return Verdict(Outcome.FAILED, f"status failed; ends on {ending.describe()} in turn {last.turn}{_said(last)}",
                       last.id, kind="status-failed")
    if not any(m.role == "assistant" for m in messages):
        request = next(m for m in reversed(messages) if m.role == "user")
        return Verdict(Outcome.FAILED, f"the request (turn {request.turn}) never got a reply{_said(request)}", request.id, kind="no-reply")
    records = [f for f in findings if f.from_records and f.severity >= Severity.FRICTION]
    stopped = None
    if records:
        last_turn = _last_turn(session, last.turn)
        stopped = next(((f, e) for f in records if f.severity == Severity.BLOCKER for e in f.evidence
                        if e.turn == last.turn and _unrecovered(e.message_id, last_turn)), None)
    if stopped is not None:
        finding, evidence = stopped
        return Verdict(Outcome.FAILED, f"{finding.rule} in the last turn ({last.turn}), no work after it",
                       evidence.message_id if evidence.message_id is not None else last.id, kind="record-blocker")
    quit_ = ending.quit
    if quit_ is not None:
        return Verdict(Outcome.ABANDONED, f"the user gave up in turn {quit_.turn}{_said(quit_)}", quit_.id, kind="user-quit")
    left = left_chat(ending)
    if left is not None:
        return Verdict(Outcome.ABANDONED, f"the user stopped answering: the agent closes the chat in turn {left[0].turn}: "
                       f"{_quote(left[1])}", left[0].id, kind="user-left")
    if ending.kind in (ERROR, BLANK, USER, CUT):
        if ending.earlier:
            return Verdict(Outcome.PARTIAL, f"earlier turns were answered, but the last one ends on {ending.describe()} "
                           f"(turn {last.turn}){_said(last)}", last.id, kind=f"ends-{ending.kind}")
        return Verdict(Outcome.FAILED, f"ends on {ending.describe()} in turn {last.turn}, and no turn was answered"
                       f"{_said(last)}", last.id, kind=f"ends-{ending.kind}")
    if not ending.finished:
        halted = ending.stopped
        if halted is not None:
            return Verdict(Outcome.PARTIAL, f"the user stopped the agent in turn {last.turn} (the client logged "
                           f"{_quote(halted.text, 60)}) after {ending.describe()}", halted.id, kind="user-stopped")
        return Verdict(Outcome.PARTIAL, f"cut off: ends on {ending.describe()} in turn {last.turn}{_said(last)}", last.id,
                       kind=f"ends-{ending.kind}")
    if ending.status == "cancelled" and not ending.completed and ending.kind != COMPLETED:
        return Verdict(Outcome.PARTIAL, "cancelled before the task was completed", last.id, kind="cancelled")
    failed = ending.client_failed
    if failed is not None:
        why = f"the client reports the last reply's change was not applied ({_quote(failed.text)})"
        return Verdict(Outcome.PARTIAL, f"{why}, after earlier answers", failed.id, kind="change-not-applied") if ending.earlier else (
            Verdict(Outcome.FAILED, why, failed.id, kind="change-not-applied"))
    undone = ending.client_undone  # read first: it is cheap, and the last turn's work is read only after one
    request = ending.request if undone is not None and ending.worked else None
    if undone is not None and request is not None and not (request.text or "").rstrip().endswith(("?", "\uff1f")):
        return Verdict(Outcome.FAILED, f"the user undid the last turn's change ({_quote(undone.text)})", undone.id, kind="change-undone")
    if ending.kind == HANDED_OFF:
        return Verdict(Outcome.HANDED_OFF, f"handed off to a person ({last.tool_name or 'hand-off'} succeeded) in turn "
                       f"{last.turn}", last.id, kind="handed-off")
    handoff = ending.handoff_said if ending.kind == ANSWERED else None
    if handoff is not None:
        return Verdict(Outcome.HANDED_OFF, f"the agent hands the conversation over in turn {handoff[0].turn}: "
                       f"{_quote(handoff[1])}", handoff[0].id, kind="handed-off-said")
    left = ending.says(NOTHING_LEFT)
    unable = None if left else ending.says_unable()
    if unable is not None:
        message, sentence = unable
        if ending.worked_after(message) or (ending.kind == COMPLETED and ending.worked):
            return Verdict(Outcome.PARTIAL, f"turn {message.turn} did work, but says: {_quote(sentence)}", message.id,
                           kind="submitted-saying-unable" if ending.kind == COMPLETED else "says-unable-after-work")
        return Verdict(Outcome.FAILED, f"the final words, in turn {message.turn}, say it could not: {_quote(sentence)}",
                       message.id, kind="says-unable")
    waiting = None if left else ending.says(WAITING)
    if waiting is not None and not ending.worked:
        return Verdict(Outcome.FAILED, f"ends waiting for the user, nothing done in turn {waiting[0].turn}: "
                       f"{_quote(waiting[1])}", waiting[0].id, kind="waiting-for-user")
    announced = None if left else announced_step(ending)
    if announced is not None:
        message, sentence = announced
        why = f"the last reply, in turn {message.turn}, announces a next step it never took: {_quote(sentence)}"
        return Verdict(Outcome.PARTIAL if ending.worked else Outcome.FAILED, why, message.id,
                       kind="announces-next-step")
    empty = None if left else came_up_empty(ending)
    if empty is not None:
        message, found, asked = empty
        return Verdict(Outcome.PARTIAL, f"the last turn's lookups came up empty ({_quote(found, 70)}) and the reply, in "
                       f"turn {message.turn}, hands a question back: {_quote(asked, 70)}", message.id, kind="came-up-empty")
    caveat = ending.says(CAVEAT)
    if caveat is not None:
        return Verdict(Outcome.PARTIAL, f"the final words, in turn {caveat[0].turn}, admit: {_quote(caveat[1])}",
                       caveat[0].id, kind="caveat")
    if len(ending.doubts) >= REPEATED_DOUBTS:
        message, sentence = ending.doubts[-1]
        return Verdict(Outcome.PARTIAL, f"turn {message.turn} admits {len(ending.doubts)} times the result is not "
                       f"verified or not fixed, last: {_quote(sentence)}", message.id, kind="doubts")
    if records:
        cited = next((e.message_id for f in records for e in f.evidence if e.message_id is not None), last.id)
        return Verdict(Outcome.PARTIAL, f"finished, with {', '.join(sorted({f.rule for f in records}))}", cited, kind="record-finding")
    if left is not None and not ending.worked:
        return Verdict(Outcome.ACHIEVED, f"the final words, in turn {left[0].turn}, say nothing is left to do: "
                       f"{_quote(left[1])}", left[0].id, kind="nothing-left")
    if ending.completion is not None:
        return Verdict(Outcome.ACHIEVED, f"complete_task succeeded in turn {ending.completion.turn}", ending.completion.id, kind="completed")
    if ending.kind == COMPLETED:
        return Verdict(Outcome.ACHIEVED, f"submitted in turn {last.turn}", last.id, kind="submitted")
    if ending.completed:
        return Verdict(Outcome.ACHIEVED, "status completed", last.id, kind="status-completed")
    answer = ending.conversation[-2] if ending.closing is not None else last
    text = (answer.text or "").strip()
    asks = text.endswith(("?", "\uff1f")) and len(text) < 300 and not OFFER.search(text[-120:])
    leave, needs = asks_leave(ending), asks_for(ending)
    if ending.answer is not None and (leave or needs or asks and not any(m.tool_calls for m in _last_turn(session, last.turn))):
        return Verdict(Outcome.UNKNOWN, f"the last reply, in turn {last.turn}, asks " + (
            f"leave to do what was asked: {_quote(leave)}" if leave else f"for what it needs to go on: {_quote(needs)}"
            if needs else f"the user a question{_said(last)}"), last.id,
            kind="asks-leave" if leave else "asks-for" if needs else "asks-question")
    contradicted = claim_contradicted(ending)
    if contradicted is not None:
        said, claim, result = contradicted
        return Verdict(Outcome.PARTIAL, f"the final answer, in turn {said.turn}, says {_quote(claim, 60)}, but the last "
                       f"tool result before it ({result.tool_name or 'tool'}, message {result.id}) is an error", said.id, kind="claim-contradicted")
    failure = reports_failure(ending)
    if failure is not None:
        said, sentence, result = failure
        return Verdict(Outcome.PARTIAL if ending.earlier else Outcome.FAILED, f"the last call before the final answer, in turn {said.turn} "
                       f"({result.tool_name or 'tool'}), failed, and the answer says so: {_quote(sentence, 80)}", said.id,
                       kind="reports-failure")
    still = _still_failing(findings, ending)
    if still is not None:
        return Verdict(Outcome.PARTIAL, f"the user says in turn {still.turn} it still does not work{_said(still)}, and no "
                       f"reply after it says it was done", still.id, kind="still-failing")
    if ending.closing is not None:
        return Verdict(Outcome.ACHIEVED, f"answered in turn {answer.turn}; the user closed with thanks"
                       f"{_said(ending.closing)}", ending.closing.id, kind="closed-with-thanks")
    return Verdict(Outcome.ACHIEVED, f"answered in turn {last.turn}{_said(last)}", last.id, kind="answered")


def _still_failing(findings: list[Finding], ending) -> "Message | None":
    """The user's last failure report when it is one of the last two requests (a
    closing aside) and no reply after it says the thing was done or fixed: what user-frustration's
    phrases found (`data.messages[].signal`), the one reading of a text rule the Outcome takes."""
    flagged = {m.get("message_id") for f in findings if f.rule == "user-frustration"
               for m in f.data.get("messages", ()) if m.get("signal") in STILL_FAILING}
    if not flagged:
        return None
    conversation = ending.conversation
    requests = [n for n, m in enumerate(conversation) if m.role == "user" and m.has_text and m is not ending.closing][-2:]
    at = next((n for n in reversed(requests) if conversation[n].id in flagged), None)
    if at is None:
        return None
    if any(m.role == "assistant" and m.has_text and CLAIMED in cue_tables(own_words(m.text[-REPLY_TAIL:]), "reply")
           for m in conversation[at + 1:]):
        return None
    if any(m.role == "user" and m.has_text and USER_SOLVED.search(canonical(m.text)) for m in conversation[at + 1:]):
        return None  # "Agora apareceu! Finalmente! muitíssimo obrigada!": the user says it works now
    return conversation[at]


def _said(message, width: int = 60) -> str:
    """': "<the message's first words>"', or nothing when it has no text."""
    if message is None:
        return ""
    text = message.text if message.text and message.text.strip() else (message.error if isinstance(message.error, str)
                                                                       else None)
    return f": {_quote(text, width)}" if text and text.strip() else ""


def _last_turn(session: Session, turn: int) -> list:
    """The user, assistant and tool messages of `turn` (the last one), found from the end."""
    return [m for m in turn_block(session.messages, turn) if m.role in CONVERSATION_ROLES]


def _quote(text: str | None, width: int = 90) -> str:
    flat = " ".join((text or "")[: 8 * width].split())  # a 5 MB answer is not folded whole for 90 characters
    return f'"{flat[:width]}{"…" if len(flat) > width else ""}"'


def _unrecovered(message_id: int | None, turn: list) -> bool:
    """No work (a tool call other than a finishing one) follows the message in its turn."""
    ids = [m.id for m in turn]
    after = turn[ids.index(message_id) + 1:] if message_id in ids else []
    return not any(not is_finishing(c) for m in after for c in m.tool_calls)
