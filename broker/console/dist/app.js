(()=>{var Q,w,vt,ae,U,ht,gt,yt,wt,nt,rt,ot,ne,W={},kt=[],se=/acit|ex(?:s|g|n|p|$)|rph|grid|ows|mnc|ntw|ine[ch]|zoo|^ord|itera/i,Y=Array.isArray;function D(t,e){for(var r in e)t[r]=e[r];return t}function st(t){t&&t.parentNode&&t.parentNode.removeChild(t)}function lt(t,e,r){var o,a,n,s={};for(n in e)n=="key"?o=e[n]:n=="ref"?a=e[n]:s[n]=e[n];if(arguments.length>2&&(s.children=arguments.length>3?Q.call(arguments,2):r),typeof t=="function"&&t.defaultProps!=null)for(n in t.defaultProps)s[n]===void 0&&(s[n]=t.defaultProps[n]);return V(t,s,o,a,null)}function V(t,e,r,o,a){var n={type:t,props:e,key:r,ref:o,__k:null,__:null,__b:0,__e:null,__c:null,constructor:void 0,__v:a??++vt,__i:-1,__u:0};return a==null&&w.vnode!=null&&w.vnode(n),n}function X(t){return t.children}function J(t,e){this.props=t,this.context=e}function q(t,e){if(e==null)return t.__?q(t.__,t.__i+1):null;for(var r;e<t.__k.length;e++)if((r=t.__k[e])!=null&&r.__e!=null)return r.__e;return typeof t.type=="function"?q(t):null}function Ct(t){var e,r;if((t=t.__)!=null&&t.__c!=null){for(t.__e=t.__c.base=null,e=0;e<t.__k.length;e++)if((r=t.__k[e])!=null&&r.__e!=null){t.__e=t.__c.base=r.__e;break}return Ct(t)}}function mt(t){(!t.__d&&(t.__d=!0)&&U.push(t)&&!K.__r++||ht!=w.debounceRendering)&&((ht=w.debounceRendering)||gt)(K)}function K(){for(var t,e,r,o,a,n,s,i=1;U.length;)U.length>i&&U.sort(yt),t=U.shift(),i=U.length,t.__d&&(r=void 0,o=void 0,a=(o=(e=t).__v).__e,n=[],s=[],e.__P&&((r=D({},o)).__v=o.__v+1,w.vnode&&w.vnode(r),it(e.__P,r,o,e.__n,e.__P.namespaceURI,32&o.__u?[a]:null,n,a??q(o),!!(32&o.__u),s),r.__v=o.__v,r.__.__k[r.__i]=r,St(n,r,s),o.__e=o.__=null,r.__e!=a&&Ct(r)));K.__r=0}function xt(t,e,r,o,a,n,s,i,d,u,p){var l,f,_,b,v,h,$,y=o&&o.__k||kt,S=e.length;for(d=le(r,e,y,d,S),l=0;l<S;l++)(_=r.__k[l])!=null&&(f=_.__i==-1?W:y[_.__i]||W,_.__i=l,h=it(t,_,f,a,n,s,i,d,u,p),b=_.__e,_.ref&&f.ref!=_.ref&&(f.ref&&ct(f.ref,null,_),p.push(_.ref,_.__c||b,_)),v==null&&b!=null&&(v=b),($=!!(4&_.__u))||f.__k===_.__k?d=Et(_,d,t,$):typeof _.type=="function"&&h!==void 0?d=h:b&&(d=b.nextSibling),_.__u&=-7);return r.__e=v,d}function le(t,e,r,o,a){var n,s,i,d,u,p=r.length,l=p,f=0;for(t.__k=new Array(a),n=0;n<a;n++)(s=e[n])!=null&&typeof s!="boolean"&&typeof s!="function"?(d=n+f,(s=t.__k[n]=typeof s=="string"||typeof s=="number"||typeof s=="bigint"||s.constructor==String?V(null,s,null,null,null):Y(s)?V(X,{children:s},null,null,null):s.constructor==null&&s.__b>0?V(s.type,s.props,s.key,s.ref?s.ref:null,s.__v):s).__=t,s.__b=t.__b+1,i=null,(u=s.__i=ie(s,r,d,l))!=-1&&(l--,(i=r[u])&&(i.__u|=2)),i==null||i.__v==null?(u==-1&&(a>p?f--:a<p&&f++),typeof s.type!="function"&&(s.__u|=4)):u!=d&&(u==d-1?f--:u==d+1?f++:(u>d?f--:f++,s.__u|=4))):t.__k[n]=null;if(l)for(n=0;n<p;n++)(i=r[n])!=null&&(2&i.__u)==0&&(i.__e==o&&(o=q(i)),Tt(i,i));return o}function Et(t,e,r,o){var a,n;if(typeof t.type=="function"){for(a=t.__k,n=0;a&&n<a.length;n++)a[n]&&(a[n].__=t,e=Et(a[n],e,r,o));return e}t.__e!=e&&(o&&(e&&t.type&&!e.parentNode&&(e=q(t)),r.insertBefore(t.__e,e||null)),e=t.__e);do e=e&&e.nextSibling;while(e!=null&&e.nodeType==8);return e}function ie(t,e,r,o){var a,n,s,i=t.key,d=t.type,u=e[r],p=u!=null&&(2&u.__u)==0;if(u===null&&t.key==null||p&&i==u.key&&d==u.type)return r;if(o>(p?1:0)){for(a=r-1,n=r+1;a>=0||n<e.length;)if((u=e[s=a>=0?a--:n++])!=null&&(2&u.__u)==0&&i==u.key&&d==u.type)return s}return-1}function bt(t,e,r){e[0]=="-"?t.setProperty(e,r??""):t[e]=r==null?"":typeof r!="number"||se.test(e)?r:r+"px"}function G(t,e,r,o,a){var n,s;t:if(e=="style")if(typeof r=="string")t.style.cssText=r;else{if(typeof o=="string"&&(t.style.cssText=o=""),o)for(e in o)r&&e in r||bt(t.style,e,"");if(r)for(e in r)o&&r[e]==o[e]||bt(t.style,e,r[e])}else if(e[0]=="o"&&e[1]=="n")n=e!=(e=e.replace(wt,"$1")),s=e.toLowerCase(),e=s in t||e=="onFocusOut"||e=="onFocusIn"?s.slice(2):e.slice(2),t.l||(t.l={}),t.l[e+n]=r,r?o?r.u=o.u:(r.u=nt,t.addEventListener(e,n?ot:rt,n)):t.removeEventListener(e,n?ot:rt,n);else{if(a=="http://www.w3.org/2000/svg")e=e.replace(/xlink(H|:h)/,"h").replace(/sName$/,"s");else if(e!="width"&&e!="height"&&e!="href"&&e!="list"&&e!="form"&&e!="tabIndex"&&e!="download"&&e!="rowSpan"&&e!="colSpan"&&e!="role"&&e!="popover"&&e in t)try{t[e]=r??"";break t}catch{}typeof r=="function"||(r==null||r===!1&&e[4]!="-"?t.removeAttribute(e):t.setAttribute(e,e=="popover"&&r==1?"":r))}}function $t(t){return function(e){if(this.l){var r=this.l[e.type+t];if(e.t==null)e.t=nt++;else if(e.t<r.u)return;return r(w.event?w.event(e):e)}}}function it(t,e,r,o,a,n,s,i,d,u){var p,l,f,_,b,v,h,$,y,S,P,L,M,g,A,j,et,O=e.type;if(e.constructor!=null)return null;128&r.__u&&(d=!!(32&r.__u),n=[i=e.__e=r.__e]),(p=w.__b)&&p(e);t:if(typeof O=="function")try{if($=e.props,y="prototype"in O&&O.prototype.render,S=(p=O.contextType)&&o[p.__c],P=p?S?S.props.value:p.__:o,r.__c?h=(l=e.__c=r.__c).__=l.__E:(y?e.__c=l=new O($,P):(e.__c=l=new J($,P),l.constructor=O,l.render=ue),S&&S.sub(l),l.props=$,l.state||(l.state={}),l.context=P,l.__n=o,f=l.__d=!0,l.__h=[],l._sb=[]),y&&l.__s==null&&(l.__s=l.state),y&&O.getDerivedStateFromProps!=null&&(l.__s==l.state&&(l.__s=D({},l.__s)),D(l.__s,O.getDerivedStateFromProps($,l.__s))),_=l.props,b=l.state,l.__v=e,f)y&&O.getDerivedStateFromProps==null&&l.componentWillMount!=null&&l.componentWillMount(),y&&l.componentDidMount!=null&&l.__h.push(l.componentDidMount);else{if(y&&O.getDerivedStateFromProps==null&&$!==_&&l.componentWillReceiveProps!=null&&l.componentWillReceiveProps($,P),!l.__e&&l.shouldComponentUpdate!=null&&l.shouldComponentUpdate($,l.__s,P)===!1||e.__v==r.__v){for(e.__v!=r.__v&&(l.props=$,l.state=l.__s,l.__d=!1),e.__e=r.__e,e.__k=r.__k,e.__k.some(function(F){F&&(F.__=e)}),L=0;L<l._sb.length;L++)l.__h.push(l._sb[L]);l._sb=[],l.__h.length&&s.push(l);break t}l.componentWillUpdate!=null&&l.componentWillUpdate($,l.__s,P),y&&l.componentDidUpdate!=null&&l.__h.push(function(){l.componentDidUpdate(_,b,v)})}if(l.context=P,l.props=$,l.__P=t,l.__e=!1,M=w.__r,g=0,y){for(l.state=l.__s,l.__d=!1,M&&M(e),p=l.render(l.props,l.state,l.context),A=0;A<l._sb.length;A++)l.__h.push(l._sb[A]);l._sb=[]}else do l.__d=!1,M&&M(e),p=l.render(l.props,l.state,l.context),l.state=l.__s;while(l.__d&&++g<25);l.state=l.__s,l.getChildContext!=null&&(o=D(D({},o),l.getChildContext())),y&&!f&&l.getSnapshotBeforeUpdate!=null&&(v=l.getSnapshotBeforeUpdate(_,b)),j=p,p!=null&&p.type===X&&p.key==null&&(j=Pt(p.props.children)),i=xt(t,Y(j)?j:[j],e,r,o,a,n,s,i,d,u),l.base=e.__e,e.__u&=-161,l.__h.length&&s.push(l),h&&(l.__E=l.__=null)}catch(F){if(e.__v=null,d||n!=null)if(F.then){for(e.__u|=d?160:128;i&&i.nodeType==8&&i.nextSibling;)i=i.nextSibling;n[n.indexOf(i)]=null,e.__e=i}else{for(et=n.length;et--;)st(n[et]);at(e)}else e.__e=r.__e,e.__k=r.__k,F.then||at(e);w.__e(F,e,r)}else n==null&&e.__v==r.__v?(e.__k=r.__k,e.__e=r.__e):i=e.__e=ce(r.__e,e,r,o,a,n,s,d,u);return(p=w.diffed)&&p(e),128&e.__u?void 0:i}function at(t){t&&t.__c&&(t.__c.__e=!0),t&&t.__k&&t.__k.forEach(at)}function St(t,e,r){for(var o=0;o<r.length;o++)ct(r[o],r[++o],r[++o]);w.__c&&w.__c(e,t),t.some(function(a){try{t=a.__h,a.__h=[],t.some(function(n){n.call(a)})}catch(n){w.__e(n,a.__v)}})}function Pt(t){return typeof t!="object"||t==null||t.__b&&t.__b>0?t:Y(t)?t.map(Pt):D({},t)}function ce(t,e,r,o,a,n,s,i,d){var u,p,l,f,_,b,v,h=r.props,$=e.props,y=e.type;if(y=="svg"?a="http://www.w3.org/2000/svg":y=="math"?a="http://www.w3.org/1998/Math/MathML":a||(a="http://www.w3.org/1999/xhtml"),n!=null){for(u=0;u<n.length;u++)if((_=n[u])&&"setAttribute"in _==!!y&&(y?_.localName==y:_.nodeType==3)){t=_,n[u]=null;break}}if(t==null){if(y==null)return document.createTextNode($);t=document.createElementNS(a,y,$.is&&$),i&&(w.__m&&w.__m(e,n),i=!1),n=null}if(y==null)h===$||i&&t.data==$||(t.data=$);else{if(n=n&&Q.call(t.childNodes),h=r.props||W,!i&&n!=null)for(h={},u=0;u<t.attributes.length;u++)h[(_=t.attributes[u]).name]=_.value;for(u in h)if(_=h[u],u!="children"){if(u=="dangerouslySetInnerHTML")l=_;else if(!(u in $)){if(u=="value"&&"defaultValue"in $||u=="checked"&&"defaultChecked"in $)continue;G(t,u,null,_,a)}}for(u in $)_=$[u],u=="children"?f=_:u=="dangerouslySetInnerHTML"?p=_:u=="value"?b=_:u=="checked"?v=_:i&&typeof _!="function"||h[u]===_||G(t,u,_,h[u],a);if(p)i||l&&(p.__html==l.__html||p.__html==t.innerHTML)||(t.innerHTML=p.__html),e.__k=[];else if(l&&(t.innerHTML=""),xt(e.type=="template"?t.content:t,Y(f)?f:[f],e,r,o,y=="foreignObject"?"http://www.w3.org/1999/xhtml":a,n,s,n?n[0]:r.__k&&q(r,0),i,d),n!=null)for(u=n.length;u--;)st(n[u]);i||(u="value",y=="progress"&&b==null?t.removeAttribute("value"):b!=null&&(b!==t[u]||y=="progress"&&!b||y=="option"&&b!=h[u])&&G(t,u,b,h[u],a),u="checked",v!=null&&v!=t[u]&&G(t,u,v,h[u],a))}return t}function ct(t,e,r){try{if(typeof t=="function"){var o=typeof t.__u=="function";o&&t.__u(),o&&e==null||(t.__u=t(e))}else t.current=e}catch(a){w.__e(a,r)}}function Tt(t,e,r){var o,a;if(w.unmount&&w.unmount(t),(o=t.ref)&&(o.current&&o.current!=t.__e||ct(o,null,e)),(o=t.__c)!=null){if(o.componentWillUnmount)try{o.componentWillUnmount()}catch(n){w.__e(n,e)}o.base=o.__P=null}if(o=t.__k)for(a=0;a<o.length;a++)o[a]&&Tt(o[a],e,r||typeof t.type!="function");r||st(t.__e),t.__c=t.__=t.__e=void 0}function ue(t,e,r){return this.constructor(t,r)}function It(t,e,r){var o,a,n,s;e==document&&(e=document.documentElement),w.__&&w.__(t,e),a=(o=typeof r=="function")?null:r&&r.__k||e.__k,n=[],s=[],it(e,t=(!o&&r||e).__k=lt(X,null,[t]),a||W,W,e.namespaceURI,!o&&r?[r]:a?null:e.firstChild?Q.call(e.childNodes):null,n,!o&&r?r:a?a.__e:e.firstChild,o,s),St(n,t,s)}Q=kt.slice,w={__e:function(t,e,r,o){for(var a,n,s;e=e.__;)if((a=e.__c)&&!a.__)try{if((n=a.constructor)&&n.getDerivedStateFromError!=null&&(a.setState(n.getDerivedStateFromError(t)),s=a.__d),a.componentDidCatch!=null&&(a.componentDidCatch(t,o||{}),s=a.__d),s)return a.__E=a}catch(i){t=i}throw t}},vt=0,ae=function(t){return t!=null&&t.constructor==null},J.prototype.setState=function(t,e){var r;r=this.__s!=null&&this.__s!=this.state?this.__s:this.__s=D({},this.state),typeof t=="function"&&(t=t(D({},r),this.props)),t&&D(r,t),t!=null&&this.__v&&(e&&this._sb.push(e),mt(this))},J.prototype.forceUpdate=function(t){this.__v&&(this.__e=!0,t&&this.__h.push(t),mt(this))},J.prototype.render=X,U=[],gt=typeof Promise=="function"?Promise.prototype.then.bind(Promise.resolve()):setTimeout,yt=function(t,e){return t.__v.__b-e.__v.__b},K.__r=0,wt=/(PointerCapture)$|Capture$/i,nt=0,rt=$t(!1),ot=$t(!0),ne=0;var z,C,ut,At,B=0,Ut=[],x=w,Nt=x.__b,Rt=x.__r,Lt=x.diffed,Ot=x.__c,Dt=x.unmount,Ht=x.__;function pt(t,e){x.__h&&x.__h(C,t,B||e),B=0;var r=C.__H||(C.__H={__:[],__h:[]});return t>=r.__.length&&r.__.push({}),r.__[t]}function m(t){return B=1,de(zt,t)}function de(t,e,r){var o=pt(z++,2);if(o.t=t,!o.__c&&(o.__=[r?r(e):zt(void 0,e),function(i){var d=o.__N?o.__N[0]:o.__[0],u=o.t(d,i);d!==u&&(o.__N=[u,o.__[1]],o.__c.setState({}))}],o.__c=C,!C.__f)){var a=function(i,d,u){if(!o.__c.__H)return!0;var p=o.__c.__H.__.filter(function(f){return!!f.__c});if(p.every(function(f){return!f.__N}))return!n||n.call(this,i,d,u);var l=o.__c.props!==i;return p.forEach(function(f){if(f.__N){var _=f.__[0];f.__=f.__N,f.__N=void 0,_!==f.__[0]&&(l=!0)}}),n&&n.call(this,i,d,u)||l};C.__f=!0;var n=C.shouldComponentUpdate,s=C.componentWillUpdate;C.componentWillUpdate=function(i,d,u){if(this.__e){var p=n;n=void 0,a(i,d,u),n=p}s&&s.call(this,i,d,u)},C.shouldComponentUpdate=a}return o.__N||o.__}function tt(t,e){var r=pt(z++,3);!x.__s&&Wt(r.__H,e)&&(r.__=t,r.u=e,C.__H.__h.push(r))}function Ft(t){return B=5,qt(function(){return{current:t}},[])}function qt(t,e){var r=pt(z++,7);return Wt(r.__H,e)&&(r.__=t(),r.__H=e,r.__h=t),r.__}function jt(t,e){return B=8,qt(function(){return t},e)}function pe(){for(var t;t=Ut.shift();)if(t.__P&&t.__H)try{t.__H.__h.forEach(Z),t.__H.__h.forEach(dt),t.__H.__h=[]}catch(e){t.__H.__h=[],x.__e(e,t.__v)}}x.__b=function(t){C=null,Nt&&Nt(t)},x.__=function(t,e){t&&e.__k&&e.__k.__m&&(t.__m=e.__k.__m),Ht&&Ht(t,e)},x.__r=function(t){Rt&&Rt(t),z=0;var e=(C=t.__c).__H;e&&(ut===C?(e.__h=[],C.__h=[],e.__.forEach(function(r){r.__N&&(r.__=r.__N),r.u=r.__N=void 0})):(e.__h.forEach(Z),e.__h.forEach(dt),e.__h=[],z=0)),ut=C},x.diffed=function(t){Lt&&Lt(t);var e=t.__c;e&&e.__H&&(e.__H.__h.length&&(Ut.push(e)!==1&&At===x.requestAnimationFrame||((At=x.requestAnimationFrame)||_e)(pe)),e.__H.__.forEach(function(r){r.u&&(r.__H=r.u),r.u=void 0})),ut=C=null},x.__c=function(t,e){e.some(function(r){try{r.__h.forEach(Z),r.__h=r.__h.filter(function(o){return!o.__||dt(o)})}catch(o){e.some(function(a){a.__h&&(a.__h=[])}),e=[],x.__e(o,r.__v)}}),Ot&&Ot(t,e)},x.unmount=function(t){Dt&&Dt(t);var e,r=t.__c;r&&r.__H&&(r.__H.__.forEach(function(o){try{Z(o)}catch(a){e=a}}),r.__H=void 0,e&&x.__e(e,r.__v))};var Mt=typeof requestAnimationFrame=="function";function _e(t){var e,r=function(){clearTimeout(o),Mt&&cancelAnimationFrame(e),setTimeout(t)},o=setTimeout(r,35);Mt&&(e=requestAnimationFrame(r))}function Z(t){var e=C,r=t.__c;typeof r=="function"&&(t.__c=void 0,r()),C=e}function dt(t){var e=C;t.__c=t.__(),C=e}function Wt(t,e){return!t||t.length!==e.length||e.some(function(r,o){return r!==t[o]})}function zt(t,e){return typeof e=="function"?e(t):e}var Gt=function(t,e,r,o){var a;e[0]=0;for(var n=1;n<e.length;n++){var s=e[n++],i=e[n]?(e[0]|=s?1:2,r[e[n++]]):e[++n];s===3?o[0]=i:s===4?o[1]=Object.assign(o[1]||{},i):s===5?(o[1]=o[1]||{})[e[++n]]=i:s===6?o[1][e[++n]]+=i+"":s?(a=t.apply(i,Gt(t,i,r,["",null])),o.push(a),i[0]?e[0]|=2:(e[n-2]=0,e[n]=a)):o.push(i)}return o},Bt=new Map;function Vt(t){var e=Bt.get(this);return e||(e=new Map,Bt.set(this,e)),(e=Gt(this,e.get(t)||(e.set(t,e=(function(r){for(var o,a,n=1,s="",i="",d=[0],u=function(f){n===1&&(f||(s=s.replace(/^\s*\n\s*|\s*\n\s*$/g,"")))?d.push(0,f,s):n===3&&(f||s)?(d.push(3,f,s),n=2):n===2&&s==="..."&&f?d.push(4,f,0):n===2&&s&&!f?d.push(5,0,!0,s):n>=5&&((s||!f&&n===5)&&(d.push(n,0,s,a),n=6),f&&(d.push(n,f,0,a),n=6)),s=""},p=0;p<r.length;p++){p&&(n===1&&u(),u(p));for(var l=0;l<r[p].length;l++)o=r[p][l],n===1?o==="<"?(u(),d=[d],n=3):s+=o:n===4?s==="--"&&o===">"?(n=1,s=""):s=o+s[0]:i?o===i?i="":s+=o:o==='"'||o==="'"?i=o:o===">"?(u(),n=1):n&&(o==="="?(n=5,a=s,s=""):o==="/"&&(n<5||r[p][l+1]===">")?(u(),n===3&&(d=d[0]),n=d,(d=d[0]).push(2,0,n),n=0):o===" "||o==="	"||o===`
`||o==="\r"?(u(),n=2):s+=o),n===3&&s==="!--"&&(n=4,d=d[0])}return u(),d})(t)),e),arguments,[])).length>1?e:e[0]}var fe=t=>t==="FAILED"?"warn":t==="PAUSED"||t==="STOPPED"?"set":"";function Jt({trace:t}){if(!t)return null;let e=t.split(`
`);return c`<details class="trace"><summary>${e[0]}</summary><pre>${e.slice(1).join(`
`)}</pre></details>`}function he({c:t,onChanged:e}){let[r,o]=m(null),[a,n]=m(!1),s=async d=>{o(null),n(!0);try{await E("POST","/connect/"+k(t.name)+d),e()}catch(u){o(u)}finally{n(!1)}},i=t.state==="PAUSED"||t.state==="STOPPED";return c`<div class="card connector" id=${"connector-"+t.name}>
    <h2>${t.name} <span class="badge">${t.type}</span> <span class=${"state "+fe(t.state)}>${t.state}</span></h2>
    <p class="muted"><code>${t.class||"—"}</code> · worker ${t.workerId||"—"}</p>
    <${Jt} trace=${t.trace} />
    <div class="scroll"><table>
      <thead><tr><th>Task</th><th>State</th><th>Worker</th><th>Error</th><th></th></tr></thead>
      <tbody>${t.tasks.map(d=>c`<tr key=${d.id} class=${d.state==="FAILED"?"warn":""}>
        <td>${d.id}</td><td>${d.state}</td><td>${d.workerId||"—"}</td><td class="wrap"><${Jt} trace=${d.trace} /></td>
        <td><button type="button" disabled=${a} onClick=${()=>s("/tasks/"+d.id+"/restart")} aria-label=${"Restart task "+d.id}>Restart</button></td></tr>`)}</tbody>
    </table></div>
    ${t.tasks.length===0&&c`<p class="muted">No tasks.</p>`}
    <${R} error=${r} />
    <button type="button" disabled=${a} onClick=${()=>s("/restart?includeTasks=true")}>Restart with tasks</button>
    ${i?c`<button type="button" disabled=${a} onClick=${()=>s("/resume")}>Resume</button>`:c`<button type="button" disabled=${a} onClick=${()=>s("/pause")}>Pause</button>`}
    <details><summary>Config</summary><table>${Object.keys(t.config).sort().map(d=>c`<tr key=${d}><td>${d}</td><td class="wrap">${t.config[d]}</td></tr>`)}</table></details>
  </div>`}function Qt(){let[t,e,r]=I("/connect");return c`<section>
    <h1>Connectors</h1>
    <${N} data=${t} error=${e} />
    ${t&&!t.configured&&c`<p class="card" id="connect-none">No Kafka Connect worker is configured. Run the embedded worker with
      <code>strata server --set connect.enable=true</code>, or point the console at one with <code>--set console.connect.url=http://host:8083</code>.</p>`}
    ${t&&t.configured&&c`
      <p class="muted">Kafka Connect REST API at <code>${t.url}</code></p>
      <div class="stats">
        <${T} label="Connectors" value=${t.connectors.length} />
        <${T} label="Failed" value=${t.connectors.filter(o=>o.state==="FAILED"||o.tasks.some(a=>a.state==="FAILED")).length}
          warn=${t.connectors.some(o=>o.state==="FAILED"||o.tasks.some(a=>a.state==="FAILED"))} />
      </div>
      ${t.connectors.length===0&&c`<p class="muted">No connectors.</p>`}
      ${t.connectors.map(o=>c`<${he} key=${o.name} c=${o} onChanged=${r} />`)}`}
  </section>`}function Kt(t,e,r,o){return!t||e[r]===null||t[r]===null||o<=0?"—":((e[r]-t[r])/o).toFixed(1)+"/s"}function Yt(){let[t,e]=I("/streams"),r=Ft({at:0,jobs:{},prev:{},dt:0});if(t&&t!==r.current.data){let s=Date.now(),i=Object.fromEntries(t.jobs.map(d=>[d.name,d]));r.current={data:t,at:s,jobs:i,prev:r.current.jobs,dt:r.current.at?(s-r.current.at)/1e3:0}}let{prev:o,dt:a}=r.current,n=s=>s??"—";return c`<section>
    <h1>Stream jobs</h1>
    <${N} data=${t} error=${e} />
    ${t&&c`
      <p class="muted">${t.source==="jobs-dir"?"The jobs of this node's --jobs-dir.":"Groups whose members are stream jobs (jobs with no running instance are not listed)."}
        Records, errors and restarts count this node's instances. A job cannot be restarted from here: it restarts itself after an error, or restart its process.</p>
      <div class="scroll"><table id="jobs">
        <thead><tr><th>Job</th><th>Application id</th><th>State</th><th>Members</th><th>Lag</th><th>In</th><th>Out</th><th>In rate</th><th>Out rate</th><th>Errors</th><th>Restarts</th></tr></thead>
        <tbody>${t.jobs.map(s=>c`<tr key=${s.name} class=${s.errors>0||s.error?"warn":""}>
          <td>${s.name}</td><td><a href=${"#/groups/"+k(s.applicationId)}>${s.applicationId}</a></td>
          <td>${s.error||s.state}</td><td>${s.members}</td><td class=${s.lag>0?"lag":""}>${s.lag<0?"?":s.lag}</td>
          <td>${n(s.recordsIn)}</td><td>${n(s.recordsOut)}</td>
          <td>${Kt(o[s.name],s,"recordsIn",a)}</td><td>${Kt(o[s.name],s,"recordsOut",a)}</td>
          <td>${n(s.errors)}</td><td>${n(s.restarts)}</td></tr>`)}</tbody>
      </table></div>
      ${t.jobs.length===0&&c`<p class="muted">No stream jobs.</p>`}`}
  </section>`}var Xt=["ALL","READ","WRITE","CREATE","DELETE","ALTER","DESCRIBE","CLUSTER_ACTION","DESCRIBE_CONFIGS","ALTER_CONFIGS","IDEMPOTENT_WRITE"],Zt=["TOPIC","GROUP","CLUSTER","TRANSACTIONAL_ID"],me=["producer_byte_rate","consumer_byte_rate","request_percentage","controller_mutation_rate","connection_creation_rate"];function _t(t){let[e,r]=m(null),[o,a]=m(!1);return[async s=>{r(null),a(!0);try{return await s(),t(),!0}catch(i){return r(i),!1}finally{a(!1)}},e,o]}var H=(t,e)=>c`${e&&c`<option value="">any</option>`}${t.map(r=>c`<option value=${r}>${r}</option>`)}`;function be(){let[t,e]=m({principal:"",resourceType:"",operation:""}),r=Object.entries(t).filter(([,_])=>_).map(([_,b])=>_+"="+k(b)).join("&"),[o,a,n]=I("/acls"+(r?"?"+r:"")),[s,i]=m({principal:"User:",host:"*",resourceType:"TOPIC",resourceName:"",patternType:"LITERAL",operation:"READ",permission:"ALLOW"}),[d,u,p]=_t(n),l=(_,b,v)=>h=>b({..._,[v]:h.target.value}),f=_=>{_.preventDefault(),d(()=>E("POST","/acls",s))};return c`
    <div class="toolbar">
      <label>Principal<input id="acl-filter-principal" value=${t.principal} onInput=${l(t,e,"principal")} placeholder="User:alice" /></label>
      <label>Resource<select value=${t.resourceType} onChange=${l(t,e,"resourceType")}>${H(Zt,!0)}</select></label>
      <label>Operation<select value=${t.operation} onChange=${l(t,e,"operation")}>${H(Xt,!0)}</select></label>
    </div>
    <${N} data=${o} error=${a} />
    ${o&&!o.enabled&&c`<p class="card" id="acls-disabled">No authorizer is enabled on this cluster (<code>authorizer.class.name</code>): ACLs are not enforced.</p>`}
    ${o&&o.enabled&&c`
      <div class="scroll"><table id="acls">
        <thead><tr><th>Principal</th><th>Host</th><th>Resource</th><th>Pattern</th><th>Operation</th><th>Permission</th><th></th></tr></thead>
        <tbody>${o.acls.map(_=>c`<tr key=${JSON.stringify(_)}>
          <td>${_.principal}</td><td>${_.host}</td><td>${_.resourceType} <b>${_.resourceName}</b></td><td>${_.patternType}</td>
          <td>${_.operation}</td><td>${_.permission}</td>
          <td><button type="button" class="danger" disabled=${p} onClick=${()=>d(()=>E("DELETE","/acls",_))}>Remove</button></td></tr>`)}</tbody>
      </table></div>
      ${o.acls.length===0&&c`<p class="muted">No ACLs${r?" match":""}.</p>`}`}
    <form class="card" onSubmit=${f} aria-labelledby="add-acl">
      <h2 id="add-acl">Add an ACL</h2>
      <div class="fields">
        <label>Principal<input id="acl-principal" value=${s.principal} onInput=${l(s,i,"principal")} required /></label>
        <label>Host<input value=${s.host} onInput=${l(s,i,"host")} /></label>
        <label>Resource<select id="acl-resource-type" value=${s.resourceType} onChange=${l(s,i,"resourceType")}>${H(Zt)}</select></label>
        <label>Name<input id="acl-resource-name" value=${s.resourceName} onInput=${l(s,i,"resourceName")} disabled=${s.resourceType==="CLUSTER"} /></label>
        <label>Pattern<select value=${s.patternType} onChange=${l(s,i,"patternType")}>${H(["LITERAL","PREFIXED"])}</select></label>
        <label>Operation<select id="acl-operation" value=${s.operation} onChange=${l(s,i,"operation")}>${H(Xt)}</select></label>
        <label>Permission<select value=${s.permission} onChange=${l(s,i,"permission")}>${H(["ALLOW","DENY"])}</select></label>
      </div>
      <${R} error=${u} />
      <button id="acl-submit" type="submit" disabled=${p}>Add ACL</button>
    </form>`}function $e(){let[t,e,r]=I("/users"),[o,a]=m(""),[n,s]=m(""),[i,d]=m("SCRAM-SHA-512"),[u,p]=m("8192"),[l,f,_]=_t(r),b=async v=>{v.preventDefault(),await l(()=>E("POST","/users",{user:o,password:n,mechanism:i,iterations:Number(u)}))&&(a(""),s(""))};return c`
    <${N} data=${t} error=${e} />
    ${t&&c`
      <div class="scroll"><table id="users">
        <thead><tr><th>User</th><th>Credentials</th><th></th></tr></thead>
        <tbody>${t.users.map(v=>c`<tr key=${v.user}>
          <td>${v.user}</td><td>${v.credentials.map(h=>c`<div>${h.mechanism} · ${h.iterations} iterations</div>`)}</td>
          <td><button type="button" class="danger" disabled=${_} onClick=${()=>l(()=>E("DELETE","/users/"+k(v.user)))}>Remove</button></td></tr>`)}</tbody>
      </table></div>
      ${t.users.length===0&&c`<p class="muted">No SCRAM users.</p>`}`}
    <form class="card" onSubmit=${b} aria-labelledby="add-user">
      <h2 id="add-user">Add a user or change a password</h2>
      <div class="fields">
        <label>User<input id="user-name" value=${o} onInput=${v=>a(v.target.value)} required autocomplete="off" /></label>
        <label>Password<input id="user-password" type="password" value=${n} onInput=${v=>s(v.target.value)} required autocomplete="new-password" /></label>
        <label>Mechanism<select value=${i} onChange=${v=>d(v.target.value)}>${H(["SCRAM-SHA-256","SCRAM-SHA-512"])}</select></label>
        <label>Iterations<input type="number" min="4096" max="16384" value=${u} onInput=${v=>p(v.target.value)} /></label>
      </div>
      <${R} error=${f} />
      <button id="user-submit" type="submit" disabled=${_}>Save user</button>
    </form>`}var te=t=>t.map(e=>`${e.type}=${e.name===null?"<default>":e.name}`).join(", ");function ve(){let[t,e,r]=I("/quotas"),[o,a]=m({type:"user",name:"",key:"producer_byte_rate",value:"1048576"}),[n,s,i]=_t(r),d=p=>l=>a({...o,[p]:l.target.value}),u=p=>{p.preventDefault();let l=[{type:o.type,name:o.name===""?null:o.name}];n(()=>E("PUT","/quotas",{entity:l,values:{[o.key]:Number(o.value)}}))};return c`
    <${N} data=${t} error=${e} />
    ${t&&c`
      <div class="scroll"><table id="quotas">
        <thead><tr><th>Entity</th><th>Quota</th><th>Value</th><th></th></tr></thead>
        <tbody>${t.quotas.flatMap(p=>Object.keys(p.values).sort().map(l=>c`<tr key=${te(p.entity)+l}>
          <td>${te(p.entity)}</td><td>${l}</td><td>${p.values[l]}</td>
          <td><button type="button" class="danger" disabled=${i} onClick=${()=>n(()=>E("DELETE","/quotas",{entity:p.entity,keys:[l]}))}>Remove</button></td></tr>`))}</tbody>
      </table></div>
      ${t.quotas.length===0&&c`<p class="muted">No client quotas.</p>`}`}
    <form class="card" onSubmit=${u} aria-labelledby="set-quota">
      <h2 id="set-quota">Set a quota</h2>
      <div class="fields">
        <label>Entity<select value=${o.type} onChange=${d("type")}>${H(["user","client-id","ip"])}</select></label>
        <label>Name (empty: the default)<input id="quota-name" value=${o.name} onInput=${d("name")} /></label>
        <label>Quota<select value=${o.key} onChange=${d("key")}>${H(me)}</select></label>
        <label>Value<input id="quota-value" type="number" min="0" step="any" value=${o.value} onInput=${d("value")} /></label>
      </div>
      <${R} error=${s} />
      <button id="quota-submit" type="submit" disabled=${i}>Set quota</button>
    </form>`}function ee({tab:t}){let e=[["acls","ACLs",be],["users","SCRAM users",$e],["quotas","Quotas",ve]],r=e.find(a=>a[0]===t)||e[0],o=r[2];return c`<section>
    <h1>Security</h1>
    <nav class="tabs" aria-label="Security">${e.map(([a,n])=>c`<a href=${"#/security/"+a} aria-current=${a===r[0]?"page":void 0}>${n}</a>`)}</nav>
    <${o} />
  </section>`}var c=Vt.bind(lt),ge=5e3;async function E(t,e,r){let o={method:t,headers:{}};t!=="GET"&&(o.headers["X-Strata-Console"]="1"),r!==void 0&&(o.headers["Content-Type"]="application/json",o.body=JSON.stringify(r));let a=await fetch("/api/v1"+e,o);if(a.status===204)return null;let n=null;try{n=await a.json()}catch{}if(!a.ok){let s=n&&n.error?n.error:a.status+" "+a.statusText,i=new Error(s);throw i.code=n&&n.code,i}return n}function I(t,e=!0){let[r,o]=m({data:null,error:null}),a=jt(()=>{t&&E("GET",t).then(n=>o({data:n,error:null}),n=>o(s=>({data:s.data,error:n})))},[t]);return tt(()=>{if(o({data:null,error:null}),a(),!e)return;let n=setInterval(a,ge);return()=>clearInterval(n)},[a,e]),[r.data,r.error,a]}function ye(){let[t,e]=m(location.hash);return tt(()=>{let r=()=>e(location.hash);return addEventListener("hashchange",r),()=>removeEventListener("hashchange",r)},[]),(t.replace(/^#/,"")||"/").split("/").filter(Boolean).map(decodeURIComponent)}var k=encodeURIComponent;function R({error:t}){return t?c`<p class="error" role="alert">${t.message}${t.code?c` <code>${t.code}</code>`:""}</p>`:null}function N({data:t,error:e}){return t?null:e?c`<${R} error=${e} />`:c`<p class="muted">Loading…</p>`}function T({label:t,value:e,warn:r}){return c`<div class=${"stat"+(r?" warn":"")}><span class="stat-value">${e}</span><span class="stat-label">${t}</span></div>`}function we(){let[t,e]=I("/cluster");return c`<section>
    <h1>Cluster</h1>
    <${N} data=${t} error=${e} />
    ${t&&c`
      <p class="muted">Cluster id <code>${t.clusterId}</code> · served by node ${t.node}</p>
      <div class="stats">
        <${T} label="Brokers" value=${t.brokers.length} />
        <${T} label="Controller" value=${t.controller} />
        <${T} label="Topics" value=${t.topics} />
        <${T} label="Partitions" value=${t.partitions} />
        <${T} label="Under-replicated" value=${t.underReplicatedPartitions} warn=${t.underReplicatedPartitions>0} />
        <${T} label="Offline" value=${t.offlinePartitions} warn=${t.offlinePartitions>0} />
      </div>
      <h2>Brokers</h2>
      <div class="scroll"><table>
        <thead><tr><th>Node</th><th>Address</th><th>Rack</th><th>Role</th></tr></thead>
        <tbody>${t.brokers.map(r=>c`<tr key=${r.nodeId}>
          <td>${r.nodeId}</td><td>${r.host}:${r.port}</td><td>${r.rack||"—"}</td>
          <td>${r.nodeId===t.controller?"controller":"broker"}</td></tr>`)}</tbody>
      </table></div>`}
  </section>`}var ke=/^[a-zA-Z0-9._-]{1,249}$/;function re(t,e){let r=[];for(let o of t.split(`
`)){if(!o.trim())continue;let a=o.indexOf(e);if(a<1)throw new Error(`"${o}" is not key${e}value`);r.push([o.slice(0,a).trim(),o.slice(a+1).trim()])}return r}function Ce({onCreated:t}){let[e,r]=m(""),[o,a]=m("1"),[n,s]=m("1"),[i,d]=m(""),[u,p]=m(null),[l,f]=m(!1);return c`<form class="card" onSubmit=${async b=>{b.preventDefault(),p(null);try{if(!ke.test(e)||e==="."||e==="..")throw new Error('Topic names use 1 to 249 of: letters, digits, ".", "_", "-".');let v=Number(o),h=Number(n);if(!Number.isInteger(v)||v<1)throw new Error("Partitions must be a whole number of at least 1.");if(!Number.isInteger(h)||h<1)throw new Error("Replication factor must be a whole number of at least 1.");let $=Object.fromEntries(re(i,"="));f(!0),await E("POST","/topics",{name:e,partitions:v,replicationFactor:h,configs:$}),r(""),t(e)}catch(v){p(v)}finally{f(!1)}}} aria-labelledby="create-topic">
    <h2 id="create-topic">Create a topic</h2>
    <div class="fields">
      <label>Name<input id="new-topic-name" value=${e} onInput=${b=>r(b.target.value)} required /></label>
      <label>Partitions<input id="new-topic-partitions" type="number" min="1" value=${o} onInput=${b=>a(b.target.value)} /></label>
      <label>Replication factor<input id="new-topic-rf" type="number" min="1" value=${n} onInput=${b=>s(b.target.value)} /></label>
    </div>
    <label><span>Configs (one <code>name=value</code> per line)</span><textarea rows="2" value=${i} onInput=${b=>d(b.target.value)} placeholder="retention.ms=86400000"></textarea></label>
    <${R} error=${u} />
    <button id="create-topic-submit" type="submit" disabled=${l}>Create topic</button>
  </form>`}function xe(){let[t,e]=m(""),[r,o]=m(1),[a,n]=m(null),s=25,[i,d,u]=I(`/topics?search=${k(t)}&page=${r}&pageSize=${s}`),p=i?Math.max(1,Math.ceil(i.total/s)):1;return c`<section>
    <h1>Topics</h1>
    <div class="toolbar">
      <label class="search">Search<input type="search" id="topic-search" value=${t}
        onInput=${l=>{e(l.target.value),o(1)}} placeholder="name contains…" /></label>
    </div>
    <${N} data=${i} error=${d} />
    ${i&&c`
      <div class="scroll"><table>
        <thead><tr><th>Name</th><th>Partitions</th><th>Replication</th><th></th></tr></thead>
        <tbody>${i.topics.map(l=>c`<tr key=${l.name}>
          <td><a href=${"#/topics/"+k(l.name)}>${l.name}</a>${l.internal?c` <span class="badge">internal</span>`:""}</td>
          <td>${l.partitions}</td><td>${l.replicationFactor}</td>
          <td><a href=${"#/topics/"+k(l.name)+"/messages"}>Messages</a></td></tr>`)}</tbody>
      </table></div>
      ${i.topics.length===0&&c`<p class="muted">No topics${t?" match":""}.</p>`}
      <nav class="pager" aria-label="Topic pages">
        <button type="button" disabled=${r<=1} onClick=${()=>o(r-1)}>Previous</button>
        <span>Page ${r} of ${p} · ${i.total} topics</span>
        <button type="button" disabled=${r>=p} onClick=${()=>o(r+1)}>Next</button>
      </nav>`}
    ${a&&c`<p class="ok" role="status">Created <a href=${"#/topics/"+k(a)}>${a}</a>.</p>`}
    <${Ce} onCreated=${l=>{n(l),u()}} />
  </section>`}function oe({what:t,name:e,onDelete:r}){let[o,a]=m(!1),[n,s]=m(""),[i,d]=m(null);return o?c`<form class="card danger-zone" onSubmit=${async p=>{p.preventDefault();try{await r()}catch(l){d(l)}}}>
    <label><span>Type <code>${e}</code> to delete this ${t}</span><input value=${n} onInput=${p=>s(p.target.value)} /></label>
    <${R} error=${i} />
    <button type="submit" class="danger" disabled=${n!==e}>Delete ${t} ${e}</button>
    <button type="button" onClick=${()=>a(!1)}>Cancel</button>
  </form>`:c`<button type="button" class="danger" onClick=${()=>a(!0)}>Delete ${t}…</button>`}function Ee({name:t}){let[e,r]=I("/topics/"+k(t)),o=async()=>{await E("DELETE","/topics/"+k(t)),location.hash="#/topics"};return c`<section>
    <p class="crumbs"><a href="#/topics">Topics</a> /</p>
    <h1>${t}</h1>
    <${N} data=${e} error=${r} />
    ${e&&c`
      <p><a class="button" href=${"#/topics/"+k(t)+"/messages"}>Browse messages</a></p>
      <h2>Partitions</h2>
      <div class="scroll"><table>
        <thead><tr><th>Partition</th><th>Leader</th><th>Replicas</th><th>ISR</th><th>Log start</th><th>High watermark</th><th>Records</th></tr></thead>
        <tbody>${e.partitions.map(a=>c`<tr key=${a.partition} class=${a.isr.length<a.replicas.length?"warn":""}>
          <td>${a.partition}</td><td>${a.leader<0?"none":a.leader}</td><td>${a.replicas.join(", ")}</td><td>${a.isr.join(", ")}</td>
          <td>${a.logStartOffset}</td><td>${a.highWatermark}</td><td>${Math.max(0,a.highWatermark-a.logStartOffset)}</td></tr>`)}</tbody>
      </table></div>
      <h2>Configs</h2>
      <div class="scroll"><table>
        <thead><tr><th>Name</th><th>Value</th><th>Source</th></tr></thead>
        <tbody>${e.configs.map(a=>c`<tr key=${a.name} class=${a.source==="DYNAMIC_TOPIC_CONFIG"?"set":""}>
          <td>${a.name}</td><td class="wrap">${a.sensitive?"(sensitive)":a.value??"—"}</td><td>${a.source}</td></tr>`)}</tbody>
      </table></div>
      ${!e.internal&&c`<${oe} what="topic" name=${t} onDelete=${o} />`}`}
  </section>`}function Se(t){return t.encoding==="base64"?Uint8Array.from(atob(t.data),e=>e.charCodeAt(0)):new TextEncoder().encode(t.data)}function ft(t,e){return t==null?c`<span class="muted">null</span>`:e==="hex"?[...Se(t)].map(r=>r.toString(16).padStart(2,"0")).join(" "):t.encoding==="base64"?c`<span class="badge">base64</span> ${t.data}`:e==="json"&&t.json?c`<pre>${JSON.stringify(JSON.parse(t.data),null,2)}</pre>`:t.data}function Pe({topic:t,partitions:e,onProduced:r}){let[o,a]=m(""),[n,s]=m(""),[i,d]=m(""),[u,p]=m(""),[l,f]=m(null),[_,b]=m(null);return c`<form class="card" onSubmit=${async h=>{h.preventDefault(),b(null),f(null);try{let $={key:n===""?null:{data:n},value:{data:i},headers:re(u,":").map(([S,P])=>({key:S,value:{data:P}}))};o!==""&&($.partition=Number(o));let y=await E("POST","/topics/"+k(t)+"/records",$);f(y),r(y)}catch($){b($)}}} aria-labelledby="produce">
    <h2 id="produce">Produce a record</h2>
    <div class="fields">
      <label>Partition<select id="produce-partition" value=${o} onChange=${h=>a(h.target.value)}>
        <option value="">by key</option>
        ${Array.from({length:e},(h,$)=>c`<option value=${$}>${$}</option>`)}
      </select></label>
      <label>Key<input id="produce-key" value=${n} onInput=${h=>s(h.target.value)} placeholder="(none)" /></label>
    </div>
    <label>Value<textarea id="produce-value" rows="3" value=${i} onInput=${h=>d(h.target.value)}></textarea></label>
    <label><span>Headers (one <code>name: value</code> per line)</span><textarea rows="2" value=${u} onInput=${h=>p(h.target.value)}></textarea></label>
    <${R} error=${_} />
    ${l&&c`<p class="ok" role="status" id="produce-result">Produced to partition ${l.partition} at offset ${l.offset}.</p>`}
    <button id="produce-submit" type="submit">Produce</button>
  </form>`}function Te({topic:t}){let[e]=I("/topics/"+k(t),!1),[r,o]=m("0"),[a,n]=m("start"),[s,i]=m("0"),[d,u]=m(""),[p,l]=m("50"),[f,_]=m("text"),[b,v]=m(null),[h,$]=m(null),[y,S]=m(null),P=()=>{let g=`?partition=${r}&limit=${p}`;return a==="offset"&&(g+="&offset="+k(s)),a==="time"&&(g+="&timestamp="+(d?new Date(d).getTime():0)),a==="end"&&(g+="&fromEnd=true"),g},L=g=>{v(g),E("GET","/topics/"+k(t)+"/records"+g).then(A=>{$(A),S(null)},S)};tt(()=>{L(P())},[t]);let M=h&&h.nextOffset<h.highWatermark;return c`<section>
    <p class="crumbs"><a href="#/topics">Topics</a> / <a href=${"#/topics/"+k(t)}>${t}</a> /</p>
    <h1>Messages</h1>
    <form class="card" onSubmit=${g=>{g.preventDefault(),L(P())}}>
      <div class="fields">
        <label>Partition<select id="browse-partition" value=${r} onChange=${g=>o(g.target.value)}>
          ${Array.from({length:e?e.partitions.length:1},(g,A)=>c`<option value=${A}>${A}</option>`)}
        </select></label>
        <label>From<select id="browse-from" value=${a} onChange=${g=>n(g.target.value)}>
          <option value="start">the log start</option><option value="offset">an offset</option>
          <option value="time">a time</option><option value="end">the end</option>
        </select></label>
        ${a==="offset"&&c`<label>Offset<input type="number" min="0" value=${s} onInput=${g=>i(g.target.value)} /></label>`}
        ${a==="time"&&c`<label>Time<input type="datetime-local" value=${d} onInput=${g=>u(g.target.value)} /></label>`}
        <label>Limit<input type="number" min="1" max="500" value=${p} onInput=${g=>l(g.target.value)} /></label>
        <label>Decode as<select id="browse-decode" value=${f} onChange=${g=>_(g.target.value)}>
          <option value="text">text</option><option value="json">JSON (pretty)</option><option value="hex">hex</option>
        </select></label>
      </div>
      <button type="submit" id="browse-submit">Load</button>
      ${b&&c` <button type="button" onClick=${()=>L(b)}>Refresh</button>`}
    </form>
    <${R} error=${y} />
    ${h&&c`
      <p class="muted">Partition ${h.partition}: offsets ${h.logStartOffset} to ${h.highWatermark-1}; showing ${h.records.length} from ${h.startOffset}.</p>
      <div class="scroll"><table class="records">
        <thead><tr><th>Offset</th><th>Timestamp</th><th>Key</th><th>Value</th><th>Headers</th></tr></thead>
        <tbody>${h.records.map(g=>c`<tr key=${g.offset}>
          <td>${g.offset}</td><td>${new Date(g.timestamp).toISOString()}</td>
          <td class="wrap">${ft(g.key,f)}</td><td class="wrap value">${ft(g.value,f)}</td>
          <td class="wrap">${g.headers.map(A=>c`<div><b>${A.key}</b>: ${ft(A.value,f)}</div>`)}</td></tr>`)}</tbody>
      </table></div>
      ${h.records.length===0&&c`<p class="muted">No records there.</p>`}
      ${M&&c`<button type="button" onClick=${()=>L(`?partition=${h.partition}&limit=${p}&offset=${h.nextOffset}`)}>Next records</button>`}`}
    ${e&&c`<${Pe} topic=${t} partitions=${e.partitions.length} onProduced=${()=>b&&L(b)} />`}
  </section>`}function Ie(){let[t,e]=I("/groups");return c`<section>
    <h1>Consumer groups</h1>
    <${N} data=${t} error=${e} />
    ${t&&c`
      <div class="scroll"><table>
        <thead><tr><th>Group</th><th>State</th><th>Protocol</th><th>Coordinator</th></tr></thead>
        <tbody>${t.groups.map(r=>c`<tr key=${r.group}>
          <td><a href=${"#/groups/"+k(r.group)}>${r.group}</a></td><td>${r.state}</td><td>${r.protocolType||"—"}</td><td>${r.coordinator}</td></tr>`)}</tbody>
      </table></div>
      ${t.groups.length===0&&c`<p class="muted">No groups.</p>`}`}
  </section>`}function Ae({name:t}){let[e,r]=I("/groups/"+k(t)),o=async()=>{await E("DELETE","/groups/"+k(t)),location.hash="#/groups"};return c`<section>
    <p class="crumbs"><a href="#/groups">Consumer groups</a> /</p>
    <h1>${t}</h1>
    <${N} data=${e} error=${r} />
    ${e&&c`
      <div class="stats">
        <${T} label="State" value=${e.state} />
        <${T} label="Members" value=${e.members.length} />
        <${T} label="Total lag" value=${e.totalLag} warn=${e.totalLag>0} />
        <${T} label="Coordinator" value=${e.coordinator} />
      </div>
      <h2>Lag per partition</h2>
      <div class="scroll"><table id="group-lag">
        <thead><tr><th>Topic</th><th>Partition</th><th>Committed</th><th>Log end</th><th>Lag</th><th>Member</th></tr></thead>
        <tbody>${e.offsets.map(a=>c`<tr key=${a.topic+"/"+a.partition}>
          <td><a href=${"#/topics/"+k(a.topic)}>${a.topic}</a></td><td>${a.partition}</td>
          <td>${a.committedOffset<0?"—":a.committedOffset}</td><td>${a.logEndOffset}</td>
          <td class=${a.lag>0?"lag":""}>${a.lag<0?"?":a.lag}</td><td class="wrap">${a.memberId||"—"}</td></tr>`)}</tbody>
      </table></div>
      <h2>Members</h2>
      <div class="scroll"><table>
        <thead><tr><th>Member</th><th>Client</th><th>Host</th><th>Assigned</th></tr></thead>
        <tbody>${e.members.map(a=>c`<tr key=${a.memberId}>
          <td class="wrap">${a.memberId}</td><td>${a.clientId}</td><td>${a.clientHost}</td>
          <td>${a.assigned.map(n=>c`<div>${n.topic}: ${n.partitions.join(", ")}</div>`)}</td></tr>`)}</tbody>
      </table></div>
      ${e.members.length===0&&c`<p class="muted">No members.</p>`}
      <${oe} what="group" name=${t} onDelete=${o} />`}
  </section>`}function Ne(){let t=ye(),e,r="cluster";t[0]==="topics"&&t[1]&&t[2]==="messages"?(e=c`<${Te} topic=${t[1]} />`,r="topics"):t[0]==="topics"&&t[1]?(e=c`<${Ee} name=${t[1]} />`,r="topics"):t[0]==="topics"?(e=c`<${xe} />`,r="topics"):t[0]==="groups"&&t[1]?(e=c`<${Ae} name=${t[1]} />`,r="groups"):t[0]==="groups"?(e=c`<${Ie} />`,r="groups"):t[0]==="connect"?(e=c`<${Qt} />`,r="connect"):t[0]==="jobs"?(e=c`<${Yt} />`,r="jobs"):t[0]==="security"?(e=c`<${ee} tab=${t[1]||"acls"} />`,r="security"):e=c`<${we} />`;let o=(a,n,s)=>c`<a href=${n} aria-current=${r===a?"page":void 0}>${s}</a>`;return c`<header>
      <a class="brand" href="#/">Strata</a>
      <nav aria-label="Main">${o("cluster","#/","Cluster")}${o("topics","#/topics","Topics")}${o("groups","#/groups","Groups")}${o("connect","#/connect","Connectors")}${o("jobs","#/jobs","Stream jobs")}${o("security","#/security","Security")}</nav>
    </header>
    <main>${e}</main>`}It(c`<${Ne} />`,document.getElementById("app"));})();
