/// The page's one style sheet and one script, constant so that the CSP can
/// name them by hash (`SlideshowPage.contentSecurityPolicy`).
extension SlideshowPage {
    static let style = """
        *{box-sizing:border-box}\
        html,body{margin:0;height:100%}\
        body{display:grid;grid-template-rows:auto minmax(0,1fr) auto;background:#141414;color:#eee;\
        font:16px/1.4 system-ui,"DejaVu Sans","Segoe UI",Roboto,sans-serif}\
        header{display:flex;align-items:baseline;gap:1rem;padding:.6rem 1rem .4rem}\
        h1{font-size:1rem;font-weight:600;margin:0;flex:1;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}\
        #status,#counter{margin:0;color:#999;font-variant-numeric:tabular-nums}\
        #status.live{color:#7c7}#status.lost{color:#e77}\
        main{min-height:0;padding:0 1rem}\
        .empty{color:#999;text-align:center;margin-top:30vh}\
        .slide{display:none;height:100%;margin:0;flex-direction:column;align-items:center;justify-content:center;gap:.6rem}\
        .slide.current{display:flex}\
        .frame{flex:0 1 auto;min-height:0;max-width:100%;display:flex;justify-content:center}\
        .panel{display:block;max-width:100%;max-height:calc(100vh - 14rem);width:auto;height:auto;background:#fff;\
        box-shadow:0 3px 18px #000c;border-radius:2px}\
        figcaption{text-align:center;max-width:60rem;max-height:8rem;overflow:auto}\
        figcaption p{margin:.15rem 0;white-space:pre-line}\
        .label{display:inline-block;font-size:.75rem;color:#bbb;border:1px solid #555;border-radius:3px;padding:0 .35rem;\
        font-variant-numeric:tabular-nums}\
        .duration{font-size:.75rem;color:#888;margin-left:.4rem;font-variant-numeric:tabular-nums}\
        .caption{font-size:1.2rem}\
        .dialogue{font-style:italic;color:#f3d38a}.dialogue::before{content:"“"}.dialogue::after{content:"”"}\
        .note{font-size:.85rem;color:#e99}\
        footer{padding:.4rem 1rem .8rem}\
        #controls{display:flex;align-items:center;gap:.5rem}\
        button{font:inherit;color:#eee;background:#2a2a2a;border:1px solid #474747;border-radius:6px;cursor:pointer}\
        #controls button{min-width:2.6rem;height:2.1rem;padding:0 .6rem;display:inline-flex;align-items:center;justify-content:center}\
        #play .icon-pause,#play.playing .icon-play{display:none}#play.playing .icon-pause{display:inline}\
        button:disabled{opacity:.35;cursor:default}button:hover:enabled{background:#383838}button:focus-visible{outline:2px solid #6af;outline-offset:1px}\
        #clock{font-variant-numeric:tabular-nums;color:#ccc;margin-left:.4rem;white-space:nowrap}\
        #keys{margin-left:auto;color:#777;font-size:.8rem}@media (max-width:640px){#keys{display:none}}\
        #timeline{position:relative;display:flex;gap:2px;height:1.9rem;margin-top:.5rem}\
        .segment{flex:1 1 0;min-width:3px;padding:0 .3rem;border:0;border-radius:3px;background:#303030;color:#999;\
        font-size:.7rem;text-align:left;overflow:hidden;white-space:nowrap}\
        .segment.scene-start{margin-left:6px}.segment.scene-start:first-child{margin-left:0}\
        .segment.done{background:#3b4356}.segment.current{background:#52648c;color:#fff}\
        #playhead{position:absolute;top:-4px;bottom:-4px;left:0;width:2px;background:#ff5b5b;pointer-events:none}
        """

    static let script = """
        (() => {
          "use strict";
          const byID = (id) => document.getElementById(id);
          const slides = Array.from(document.querySelectorAll(".slide"));
          const segments = Array.from(document.querySelectorAll(".segment"));
          const playButton = byID("play"), clock = byID("clock"), counter = byID("counter");
          const playhead = byID("playhead"), status = byID("status");
          const live = document.body.dataset.live === "true";
          for (const button of document.querySelectorAll("button")) {
            button.addEventListener("mousedown", (event) => event.preventDefault());
          }
          const durations = slides.map((slide) => {
            const seconds = parseFloat(slide.dataset.duration);
            return seconds > 0 ? seconds : 2;
          });
          const starts = [];
          let total = 0;
          for (const seconds of durations) { starts.push(total); total += seconds; }
          let current = 0, elapsed = 0, playing = false, lastTick = 0, timer = 0;

          const format = (seconds) => {
            const whole = Math.floor(seconds + 1e-6);
            return Math.floor(whole / 60) + ":" + String(whole % 60).padStart(2, "0");
          };
          const sound = (index) => slides[index] ? slides[index].querySelector("audio") : null;

          function render() {
            if (slides.length === 0) return;
            const within = Math.min(elapsed, durations[current]);
            clock.textContent = format(starts[current] + within) + " / " + format(total);
            const segment = segments[current];
            playhead.style.left = (segment.offsetLeft + segment.offsetWidth * within / durations[current]) + "px";
            playButton.classList.toggle("playing", playing);
            playButton.setAttribute("aria-label", playing ? "Pause" : "Play");
            playButton.setAttribute("aria-pressed", String(playing));
          }

          function syncSound() {
            const audio = sound(current);
            if (!audio) return;
            const offset = parseFloat(slides[current].dataset.soundOffset) || 0;
            const at = elapsed - offset;
            const inside = playing && at >= 0 && !(audio.duration > 0 && at >= audio.duration);
            if (inside && audio.paused) {
              try { audio.currentTime = at; } catch (error) { /* not seekable yet: from its start */ }
              audio.play().catch(() => {});
            } else if (!inside && !audio.paused) {
              audio.pause();
            }
          }

          function show(index, at) {
            if (slides.length === 0) return;
            index = Math.max(0, Math.min(slides.length - 1, index));
            const before = sound(current);
            if (before && !before.paused) before.pause();
            slides[current].classList.remove("current");
            slides[current].removeAttribute("aria-current");
            current = index;
            elapsed = at || 0;
            slides[current].classList.add("current");
            slides[current].setAttribute("aria-current", "true");
            segments.forEach((segment, i) => {
              segment.classList.toggle("current", i === current);
              segment.classList.toggle("done", i < current);
            });
            counter.textContent = (current + 1) + " / " + slides.length;
            if (location.hash !== "#" + (current + 1)) {
              try { history.replaceState(null, "", "#" + (current + 1)); } catch (error) { /* a page without history */ }
            }
            syncSound();
            render();
          }

          function tick() {
            const now = performance.now();
            elapsed += (now - lastTick) / 1000;
            lastTick = now;
            while (elapsed >= durations[current]) {
              if (current === slides.length - 1) {
                elapsed = durations[current];
                pause();
                return;
              }
              show(current + 1, elapsed - durations[current]);
            }
            syncSound();
            render();
          }

          function play() {
            if (playing || slides.length === 0) return;
            if (current === slides.length - 1 && elapsed >= durations[current]) show(0, 0);
            playing = true;
            lastTick = performance.now();
            timer = setInterval(tick, 40);
            syncSound();
            render();
          }

          function pause() {
            playing = false;
            clearInterval(timer);
            const audio = sound(current);
            if (audio) audio.pause();
            render();
          }

          const toggle = () => (playing ? pause() : play());
          byID("play").addEventListener("click", toggle);
          byID("previous").addEventListener("click", () => show(current - 1, 0));
          byID("next").addEventListener("click", () => show(current + 1, 0));
          segments.forEach((segment, i) => {
            segment.style.flexGrow = String(durations[i]);
            segment.addEventListener("click", () => show(i, 0));
          });
          document.addEventListener("keydown", (event) => {
            if (event.altKey || event.ctrlKey || event.metaKey) return;
            switch (event.key) {
              case "ArrowRight": case "PageDown": show(current + 1, 0); break;
              case "ArrowLeft": case "PageUp": show(current - 1, 0); break;
              case " ": case "k": toggle(); break;
              case "Home": show(0, 0); break;
              case "End": show(slides.length - 1, 0); break;
              default: return;
            }
            event.preventDefault();
          });
          const fromHash = () => {
            const number = parseInt(location.hash.slice(1), 10);
            return number >= 1 && number <= slides.length ? number - 1 : null;
          };
          window.addEventListener("hashchange", () => {
            const index = fromHash();
            if (index !== null && index !== current) show(index, 0);
          });
          window.addEventListener("resize", render);

          const start = fromHash();
          if (start !== null) show(start, 0); else render();
          // A link to one shot (#3) and the live preview open paused; the slideshow plays.
          if (start === null && !live) play();

          if (live && "EventSource" in window) {
            const events = new EventSource("events");
            events.addEventListener("open", () => { status.textContent = "● live"; status.className = "live"; });
            events.addEventListener("error", () => { status.textContent = "reconnecting…"; status.className = "lost"; });
            events.addEventListener("shot", (event) => {
              let data;
              try { data = JSON.parse(event.data); } catch (error) { return; }
              const slide = slides.find((candidate) => candidate.dataset.shot === data.shot);
              if (!slide) return;
              const image = slide.querySelector("img.panel");
              const next = new Image();
              next.addEventListener("load", () => { image.src = next.src; });
              next.src = image.dataset.src + "?v=" + encodeURIComponent(String(data.version));
            });
            events.addEventListener("reload", () => {
              try { history.replaceState(null, "", "#" + (current + 1)); } catch (error) { /* reloads at the start */ }
              location.reload();
            });
            events.addEventListener("closed", () => {
              events.close();
              status.textContent = "preview closed";
              status.className = "lost";
            });
          }
        })();
        """
}
