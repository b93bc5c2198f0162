/**
 * What a reviewer typed survives a refused action: the page keeps the form controls' values
 * before it reloads the request, and puts them back when the action was refused, so a review
 * refused (for instance an author approving their own request) never loses its text.
 */

type Control = HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;

/** The values of the view's form controls that have an id. */
export function keepDrafts(view: HTMLElement): Map<string, string> {
  const kept = new Map<string, string>();
  for (const c of view.querySelectorAll<Control>('input[id], textarea[id], select[id]'))
    kept.set(c.id, c instanceof HTMLInputElement && c.type === 'checkbox' ? String(c.checked) : c.value);
  return kept;
}

/** Puts kept values back into the controls of the same ids that the new view has. */
export function restoreDrafts(view: HTMLElement, kept: Map<string, string>): void {
  for (const [id, value] of kept) {
    const c = view.querySelector<Control>(`#${CSS.escape(id)}`);
    if (c === null) continue;
    if (c instanceof HTMLInputElement && c.type === 'checkbox') c.checked = value === 'true';
    else c.value = value;
  }
}
