/** Whole entries are kept deflated in the index: a fraction of the JSON's size, inflated in microseconds. */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Deflates an entry's JSON for `entry_docs.doc`. */
export function packDoc(json: string): Uint8Array {
  return Bun.deflateSync(encoder.encode(json), { level: 1 });
}

/** The JSON text of an `entry_docs.doc` value. */
export function unpackDoc(doc: Uint8Array): string {
  return decoder.decode(Bun.inflateSync(doc as Uint8Array<ArrayBuffer>));
}
