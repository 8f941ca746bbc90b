/**
 * Who ran a session and with what: the author the client recorded, the key's owner where the team server vouches
 * for someone else, the agent's model and the session a `/clear` continued. Kept apart from the cards and the entry
 * page, which only place these pieces.
 */
import type { Summary } from "./api.ts";
import { h } from "./dom.ts";
import { personName, samePerson } from "../../util/person.ts";

/** The key's owner when it is not the person the author names (only the team server knows a key's owner). */
function otherSender(e: Pick<Summary, "author" | "keyOwner">): string | null {
  if (!e.keyOwner) return null;
  return e.author && samePerson(e.author, e.keyOwner) ? null : e.keyOwner;
}

/** The person of a session card: the author's name, and who sent it when the server knows someone else. */
export function sessionPerson(entries: Summary[]): HTMLElement | null {
  const e = entries.find((x) => x.author || x.keyOwner);
  if (!e) return null;
  const sender = otherSender(e);
  const name = e.author ? personName(e.author) : null;
  const text = name ? (sender ? `${name} (sent by ${sender})` : name) : `sent by ${sender}`;
  return h("span", { class: "person", title: e.author ?? "" }, text);
}

/** The entry page's facts about the person and the agent: `dt`/`dd` pairs, none for what was not recorded. */
export function personFacts(e: Summary): HTMLElement[] {
  const out: HTMLElement[] = [];
  const pair = (term: string, ...value: (Node | string)[]) => out.push(h("dt", null, term), h("dd", null, ...value));
  if (e.author) pair("Author", h("span", { class: "author" }, e.author));
  const sender = otherSender(e);
  if (sender) pair("Sent by", h("span", { class: "key-owner", title: "The owner of the key that sent this entry to the server" }, sender));
  if (e.model) pair("Model", e.model);
  if (e.continuedFrom) {
    pair("Continues", h("a", { href: `#/session/${encodeURIComponent(e.continuedFrom)}`, class: "continued-from" }, e.continuedFrom), " (before /clear)");
  }
  return out;
}

/** The mark of a teammate's entry shown by `aiflare ui` from the team cache: "team", with its author's name. */
export function teamBadge(e: Pick<Summary, "from" | "author">): HTMLElement | null {
  if (e.from !== "team") return null;
  const name = e.author ? personName(e.author) : null;
  return h("span", { class: "team", title: "The team's entry, from this clone's team cache (read-only)" }, name ? `team · ${name}` : "team");
}
