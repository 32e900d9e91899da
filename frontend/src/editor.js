// The code editor of the lesson page: CodeMirror 6 with Python highlighting.
// build.mjs bundles this file (and CodeMirror) into src/qkv/web/static/vendor/editor.js,
// which lesson.js imports; the page never loads anything from a CDN.
import { closeBrackets, closeBracketsKeymap } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { bracketMatching, indentOnInput, indentUnit, syntaxHighlighting } from "@codemirror/language";
import { EditorState, Prec } from "@codemirror/state";
import {
  EditorView,
  drawSelection,
  highlightActiveLine,
  highlightActiveLineGutter,
  highlightSpecialChars,
  keymap,
  lineNumbers,
} from "@codemirror/view";
import { classHighlighter } from "@lezer/highlight";

// A small, calm setup for a lesson: line numbers, undo history, bracket help and Python indentation.
// No completion pop-ups, search panel or lint gutter (CodeMirror's basicSetup has them; a learner
// writing four short functions does not need them, and leaving them out keeps the bundle smaller).
const lessonSetup = [
  lineNumbers(),
  highlightActiveLineGutter(),
  highlightSpecialChars(),
  history(),
  drawSelection(),
  indentOnInput(),
  bracketMatching(),
  closeBrackets(),
  highlightActiveLine(),
  keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, indentWithTab]),
];

/**
 * Replace a <textarea> with a CodeMirror editor and keep the textarea's value in sync.
 *
 * @param {HTMLTextAreaElement} textarea  the server-rendered fallback; it stays in the DOM, hidden.
 * @param {{doc?: string, onRun?: () => void, label?: string, stylesheet?: string}} options
 *   doc: the initial text (defaults to the textarea's value);
 *   onRun: called on Ctrl/⌘+Enter;
 *   label: accessible name of the editing area;
 *   stylesheet: URL of a stylesheet to load inside the editor's shadow root.
 * @returns {{view: EditorView, host: HTMLElement, getValue: () => string, setValue: (text: string) => void,
 *   focus: () => void}}
 */
export function mountEditor(textarea, options = {}) {
  const runKeys = Prec.highest(
    keymap.of([
      {
        key: "Mod-Enter",
        run: () => {
          if (options.onRun) options.onRun();
          return true;
        },
      },
    ]),
  );
  // Tab indents inside the editor; Escape then Tab leaves it (CodeMirror's escape hatch for keyboard users).
  const state = EditorState.create({
    doc: options.doc ?? textarea.value,
    extensions: [
      runKeys,
      lessonSetup,
      python(),
      // Stable tok-* class names, coloured by lesson.css for light and dark schemes alike.
      syntaxHighlighting(classHighlighter),
      indentUnit.of("    "),
      EditorState.tabSize.of(4),
      EditorView.contentAttributes.of({ "aria-label": options.label ?? "Python code editor" }),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) textarea.value = update.state.doc.toString();
      }),
    ],
  });
  // The editor lives in a shadow root: CodeMirror then installs its own styles as constructed
  // stylesheets, which a Content-Security-Policy of style-src 'self' allows (a <style> tag it forbids).
  const host = document.createElement("div");
  host.className = "cm-host";
  const shadow = host.attachShadow({ mode: "open" });
  if (options.stylesheet) {
    const link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = options.stylesheet;
    shadow.append(link);
  }
  textarea.insertAdjacentElement("afterend", host);
  const view = new EditorView({ state, parent: shadow, root: shadow });
  textarea.hidden = true;
  textarea.value = state.doc.toString();
  return {
    view,
    host,
    getValue: () => view.state.doc.toString(),
    setValue: (text) => {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    focus: () => view.focus(),
  };
}
