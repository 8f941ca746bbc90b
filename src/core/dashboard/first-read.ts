/**
 * The read a page signed in from `aiflare ui`'s printed URL opens with: the unfiltered timeline's first page. The
 * server reads it ahead as it starts and the page asks for it in the sign-in (`?first=`). No imports: the page
 * shares it.
 */

/** Entries on one timeline page. */
export const TIMELINE_PAGE = 50;

export const FIRST_READ = `/api/v1/timeline?limit=${TIMELINE_PAGE}`;
