/** A whole session's (redacted) transcript, with a marker where each commit was cut. */
import { get, type SessionAnswer, type Summary } from "./api.ts";
import { h, mount, type Child } from "./dom.ts";
import { agentLabel, dateTimeLabel, entryTime, parseTurns, shortHash, tagBadge, timeLabel, turnView } from "./format.ts";

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

export async function sessionView(main: HTMLElement, id: string): Promise<void> {
  const s = await get<SessionAnswer>(`sessions/${encodeURIComponent(id)}`);
  const turns = parseTurns(s.transcript);
  const byHash = new Map(s.entries.map((e) => [e.commitHash, e]));
  const cutsAt = new Map<number, string[]>();
  for (const c of s.cuts) cutsAt.set(c.afterLine, [...(cutsAt.get(c.afterLine) ?? []), c.commitHash]);
  const body: Child[] = [];
  const markers = (n: number) => (cutsAt.get(n) ?? []).map((h) => marker(byHash.get(h), h));
  body.push(markers(0));
  turns.forEach((t, i) => {
    body.push(turnView(t.role === "user" ? "User" : "Assistant", t.role, t.content));
    body.push(markers(i + 1));
  });
  // cuts beyond the stored transcript (it was stored before the last commits) still show
  for (const [n, hashes] of cutsAt) if (n > turns.length) body.push(hashes.map((x) => marker(byHash.get(x), x)));
  document.title = `Session ${s.sessionId} · aiflare`;
  const first = s.entries[0];
  mount(
    main,
    h("a", { href: "#/", class: "back" }, "← Timeline"),
    h("h1", null, "Session ", h("code", null, s.sessionId)),
    h(
      "p",
      { class: "muted" },
      first ? `${agentLabel(first.agentType)} · ${first.branch} · ${dateTimeLabel(entryTime(first))} – ${dateTimeLabel(entryTime(s.entries.at(-1)!))} · ` : "",
      `${turns.length} turns · ${s.entries.length} commits · `,
      h("a", { href: `#/?session=${encodeURIComponent(s.sessionId)}` }, "its entries in the timeline"),
    ),
    h("div", { class: "transcript" }, turns.length || s.cuts.length ? body : h("p", { class: "muted" }, "No transcript was stored for this session.")),
  );
}
