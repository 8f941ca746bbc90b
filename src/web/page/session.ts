/** A whole session's (redacted) transcript, with a marker where each commit was cut. */
import { get, type SessionAnswer, type Summary } from "./api.ts";
import { h, mount, type Child } from "./dom.ts";
import { agentLabel, dateTimeLabel, dayKey, entryTime, labelTurns, parseTurns, plural, shortHash, tagBadge, timeLabel, turnView } from "./format.ts";

function marker(e: Summary | undefined, hash: string): HTMLElement {
  return h(
    "a",
    { class: "cut", href: `#/entry/${hash}`, data: { hash } },
    h("span", { class: "cut-dot", attrs: { "aria-hidden": "true" } }, "●"),
    " commit ",
    h("code", null, shortHash(hash)),
    " ",
    e ? tagBadge(e.tag) : null,
    " ",
    e?.title ?? "",
    e ? h("span", { class: "muted" }, ` · ${timeLabel(entryTime(e))}`) : null,
  );
}

/** A time range in few words: one day's times, or two dates. */
function rangeLabel(from: Date, to: Date): string {
  return dayKey(from) === dayKey(to) ? `${dateTimeLabel(from)}–${timeLabel(to)}` : `${dateTimeLabel(from)} – ${dateTimeLabel(to)}`;
}

export async function sessionView(main: HTMLElement, id: string): Promise<void> {
  const s = await get<SessionAnswer>(`sessions/${encodeURIComponent(id)}`);
  const turns = parseTurns(s.transcript);
  const byHash = new Map(s.entries.map((e) => [e.commitHash, e]));
  const cutsAt = new Map<number, string[]>();
  for (const c of s.cuts) cutsAt.set(c.afterLine, [...(cutsAt.get(c.afterLine) ?? []), c.commitHash]);
  // Each commit's stretch of the conversation is labelled as its entry page labels it: the agent's question and
  // the user's answer before a commit that continues the request are marked.
  const labels: ReturnType<typeof labelTurns> = [];
  let from = 0;
  for (const c of [...s.cuts, { commitHash: "", afterLine: turns.length }]) {
    const to = Math.min(Math.max(c.afterLine, from), turns.length);
    labels.push(...labelTurns(turns.slice(from, to)));
    from = to;
  }
  const body: Child[] = [];
  const markers = (n: number) => (cutsAt.get(n) ?? []).map((h) => marker(byHash.get(h), h));
  body.push(markers(0));
  labels.forEach((t, i) => {
    body.push(turnView(t.label, t.kind, t.content, t.kind === "assistant" || t.kind === "question"));
    body.push(markers(i + 1));
  });
  // cuts beyond the stored transcript (it was stored before the last commits) still show
  for (const [n, hashes] of cutsAt) if (n > turns.length) body.push(hashes.map((x) => marker(byHash.get(x), x)));
  const request = turns.find((t) => t.role === "user")?.content.trim() || s.entries.find((e) => e.request)?.request?.trim() || "";
  document.title = `${request ? request.slice(0, 60) : `Session ${s.sessionId}`} · aiflare`;
  // the conversation's own times when its lines carry them, else its commits'
  const times = turns.flatMap((t) => (t.at === undefined ? [] : [t.at]));
  const span = times.length
    ? { from: new Date(Math.min(...times)), to: new Date(Math.max(...times)) }
    : s.entries.length
      ? { from: entryTime(s.entries[0]!), to: entryTime(s.entries.at(-1)!) }
      : null;
  const first = s.entries[0];
  mount(
    main,
    h("a", { href: "#/", class: "back" }, "← Timeline"),
    h("h1", { class: "session-title" }, request || "(no request recorded)"),
    h(
      "p",
      { class: "muted session-meta" },
      first ? `${agentLabel(first.agentType)} · ${first.branch} · ` : "",
      span ? `${rangeLabel(span.from, span.to)} · ` : "",
      `${plural(turns.length, "turn", "turns")} · ${plural(s.entries.length, "commit", "commits")} · `,
      h("a", { href: `#/?session=${encodeURIComponent(s.sessionId)}` }, "its entries in the timeline"),
    ),
    h("p", { class: "muted session-meta" }, "Session ", h("code", { class: "session-id" }, s.sessionId)),
    h("div", { class: "transcript" }, turns.length || s.cuts.length ? body : h("p", { class: "muted" }, "No transcript was stored for this session.")),
  );
}
