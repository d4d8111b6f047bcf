// The labelling widget's view (anywidget ESM). It shows one task, blinded: the question and
// the answer(s) only -- no model name, no judge verdict -- under the study's guideline (the
// criterion, the meaning of each score or of "better"), and the item's opaque name.
// Keys: 1-9 pick a score, Enter sends it; for a pair, 1 / ArrowLeft = left,
// 2 / ArrowRight = right, 0 / t = tie.
// Keys typed into the rationale box are left alone (Esc leaves the box).
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function render({ model, el: root }) {
  const box = el("div", "wb-label");
  box.tabIndex = 0;
  root.appendChild(box);
  let chosen = null;

  function send(value) {
    const task = model.get("task");
    if (!task || !task.token) return;
    const rationale = box.querySelector("textarea");
    // a custom message, not a synced trait: each answer is one event for the kernel
    model.send({
      type: "label",
      token: task.token,
      value: value,
      rationale: rationale ? rationale.value : "",
    });
  }

  function guideline(kind) {
    // the criterion and what each answer means, with every task
    const guide = model.get("guide") || {};
    const anchors = Object.entries(guide.anchors || {});
    if (!guide.text && !anchors.length && !guide.better) return;
    const wrap = el("details", "wb-guide");
    wrap.open = true;
    wrap.appendChild(el("summary", "", "Guideline"));
    if (guide.text) wrap.appendChild(el("div", "wb-guide-text", guide.text));
    if (kind === "pairwise" && guide.better) {
      wrap.appendChild(el("div", "wb-better", "Better means: " + guide.better));
    }
    if (kind !== "pairwise" && anchors.length) {
      const list = el("dl", "wb-anchors");
      anchors.sort((a, b) => Number(a[0]) - Number(b[0])).forEach(([score, meaning]) => {
        list.appendChild(el("dt", "", score));
        list.appendChild(el("dd", "", meaning));
      });
      wrap.appendChild(list);
    }
    box.appendChild(wrap);
  }

  function draw() {
    const task = model.get("task");
    box.replaceChildren();
    chosen = null;
    const ref = task && task.ref ? " · item " + task.ref : "";
    box.appendChild(el("div", "wb-progress", (model.get("progress") || "") + ref));
    if (model.get("error")) box.appendChild(el("div", "wb-error", model.get("error")));
    if (!task || !task.token) {
      box.appendChild(el("div", "wb-done", model.get("message") || "Nothing to label."));
      return;
    }
    guideline(task.kind);
    if (task.repeat) {
      box.appendChild(el("div", "wb-repeat", "Asked again on purpose: you labelled this item before."));
    }
    const q = el("div", "wb-text wb-question", task.question || "");
    q.lang = task.lang || "";
    box.appendChild(q);
    if (task.kind === "pairwise") {
      const row = el("div", "wb-pair");
      ["left", "right"].forEach((side, i) => {
        const col = el("div", "wb-col");
        col.appendChild(el("div", "wb-side", i === 0 ? "Left (1, ←)" : "Right (2, →)"));
        const t = el("div", "wb-text wb-answer", task[side]);
        t.lang = task.lang || "";
        col.appendChild(t);
        const b = el("button", "wb-choice", i === 0 ? "Left is better" : "Right is better");
        b.dataset.value = side;
        b.onclick = () => send(side);
        col.appendChild(b);
        row.appendChild(col);
      });
      box.appendChild(row);
      const tie = el("button", "wb-choice wb-tie", "Tie (0, t)");
      tie.dataset.value = "tie";
      tie.onclick = () => send("tie");
      box.appendChild(tie);
    } else {
      const t = el("div", "wb-text wb-answer", task.answer || "");
      t.lang = task.lang || "";
      box.appendChild(t);
      const scale = el("div", "wb-scale");
      for (let s = task.low; s <= task.high; s++) {
        const b = el("button", "wb-choice", String(s));
        b.dataset.value = String(s);
        const anchor = (model.get("guide") || {}).anchors || {};
        if (anchor[String(s)]) b.title = anchor[String(s)];
        b.onclick = () => { chosen = s; mark(); };
        scale.appendChild(b);
      }
      box.appendChild(scale);
      const go = el("button", "wb-submit", "Submit (Enter)");
      go.onclick = () => { if (chosen !== null) send(chosen); };
      box.appendChild(go);
    }
    if (task.rationale) {
      const area = el("textarea", "wb-rationale");
      area.placeholder = "Rationale (optional)";
      box.appendChild(area);
    }
    box.focus();
  }

  function mark() {
    box.querySelectorAll(".wb-scale .wb-choice").forEach((b) => {
      b.classList.toggle("wb-selected", Number(b.dataset.value) === chosen);
    });
  }

  box.addEventListener("keydown", (event) => {
    if (event.target.tagName === "TEXTAREA") {
      event.stopPropagation();        // typing a rationale never reaches Lab's shortcuts
      if (event.key === "Escape") box.focus();
      return;
    }
    const task = model.get("task");
    if (!task || !task.token) return;
    const key = event.key;
    if (task.kind === "pairwise") {
      if (key === "1" || key === "ArrowLeft") send("left");
      else if (key === "2" || key === "ArrowRight") send("right");
      else if (key === "0" || key === "t") send("tie");
      else return;
    } else if (/^[0-9]$/.test(key) && Number(key) >= task.low && Number(key) <= task.high) {
      chosen = Number(key);
      mark();
    } else if (key === "Enter" && chosen !== null) {
      send(chosen);
    } else {
      return;
    }
    // a key the widget used is not also a notebook shortcut (1-6 would turn the cell
    // into a heading, arrows move between cells): JupyterLab handles keys as they bubble
    event.preventDefault();
    event.stopPropagation();
  });

  model.on("change:task", draw);
  model.on("change:progress", draw);
  model.on("change:error", draw);
  model.on("change:guide", draw);
  draw();
}

export default { render };
