(()=>{var K,y,$t,te,A,ft,gt,vt,yt,at,rt,ot,ee,F={},wt=[],re=/acit|ex(?:s|g|n|p|$)|rph|grid|ows|mnc|ntw|ine[ch]|zoo|^ord|itera/i,Q=Array.isArray;function L(t,e){for(var r in e)t[r]=e[r];return t}function st(t){t&&t.parentNode&&t.parentNode.removeChild(t)}function it(t,e,r){var o,n,a,i={};for(a in e)a=="key"?o=e[a]:a=="ref"?n=e[a]:i[a]=e[a];if(arguments.length>2&&(i.children=arguments.length>3?K.call(arguments,2):r),typeof t=="function"&&t.defaultProps!=null)for(a in t.defaultProps)i[a]===void 0&&(i[a]=t.defaultProps[a]);return V(t,i,o,n,null)}function V(t,e,r,o,n){var a={type:t,props:e,key:r,ref:o,__k:null,__:null,__b:0,__e:null,__c:null,constructor:void 0,__v:n??++$t,__i:-1,__u:0};return n==null&&y.vnode!=null&&y.vnode(a),a}function X(t){return t.children}function G(t,e){this.props=t,this.context=e}function q(t,e){if(e==null)return t.__?q(t.__,t.__i+1):null;for(var r;e<t.__k.length;e++)if((r=t.__k[e])!=null&&r.__e!=null)return r.__e;return typeof t.type=="function"?q(t):null}function kt(t){var e,r;if((t=t.__)!=null&&t.__c!=null){for(t.__e=t.__c.base=null,e=0;e<t.__k.length;e++)if((r=t.__k[e])!=null&&r.__e!=null){t.__e=t.__c.base=r.__e;break}return kt(t)}}function ht(t){(!t.__d&&(t.__d=!0)&&A.push(t)&&!J.__r++||ft!=y.debounceRendering)&&((ft=y.debounceRendering)||gt)(J)}function J(){for(var t,e,r,o,n,a,i,l=1;A.length;)A.length>l&&A.sort(vt),t=A.shift(),l=A.length,t.__d&&(r=void 0,o=void 0,n=(o=(e=t).__v).__e,a=[],i=[],e.__P&&((r=L({},o)).__v=o.__v+1,y.vnode&&y.vnode(r),lt(e.__P,r,o,e.__n,e.__P.namespaceURI,32&o.__u?[n]:null,a,n??q(o),!!(32&o.__u),i),r.__v=o.__v,r.__.__k[r.__i]=r,Pt(a,r,i),o.__e=o.__=null,r.__e!=n&&kt(r)));J.__r=0}function xt(t,e,r,o,n,a,i,l,_,c,d){var s,p,f,b,k,h,m,v=o&&o.__k||wt,P=e.length;for(_=oe(r,e,v,_,P),s=0;s<P;s++)(f=r.__k[s])!=null&&(p=f.__i==-1?F:v[f.__i]||F,f.__i=s,h=lt(t,f,p,n,a,i,l,_,c,d),b=f.__e,f.ref&&p.ref!=f.ref&&(p.ref&&ct(p.ref,null,f),d.push(f.ref,f.__c||b,f)),k==null&&b!=null&&(k=b),(m=!!(4&f.__u))||p.__k===f.__k?_=Ct(f,_,t,m):typeof f.type=="function"&&h!==void 0?_=h:b&&(_=b.nextSibling),f.__u&=-7);return r.__e=k,_}function oe(t,e,r,o,n){var a,i,l,_,c,d=r.length,s=d,p=0;for(t.__k=new Array(n),a=0;a<n;a++)(i=e[a])!=null&&typeof i!="boolean"&&typeof i!="function"?(_=a+p,(i=t.__k[a]=typeof i=="string"||typeof i=="number"||typeof i=="bigint"||i.constructor==String?V(null,i,null,null,null):Q(i)?V(X,{children:i},null,null,null):i.constructor==null&&i.__b>0?V(i.type,i.props,i.key,i.ref?i.ref:null,i.__v):i).__=t,i.__b=t.__b+1,l=null,(c=i.__i=ne(i,r,_,s))!=-1&&(s--,(l=r[c])&&(l.__u|=2)),l==null||l.__v==null?(c==-1&&(n>d?p--:n<d&&p++),typeof i.type!="function"&&(i.__u|=4)):c!=_&&(c==_-1?p--:c==_+1?p++:(c>_?p--:p++,i.__u|=4))):t.__k[a]=null;if(s)for(a=0;a<d;a++)(l=r[a])!=null&&(2&l.__u)==0&&(l.__e==o&&(o=q(l)),Et(l,l));return o}function Ct(t,e,r,o){var n,a;if(typeof t.type=="function"){for(n=t.__k,a=0;n&&a<n.length;a++)n[a]&&(n[a].__=t,e=Ct(n[a],e,r,o));return e}t.__e!=e&&(o&&(e&&t.type&&!e.parentNode&&(e=q(t)),r.insertBefore(t.__e,e||null)),e=t.__e);do e=e&&e.nextSibling;while(e!=null&&e.nodeType==8);return e}function ne(t,e,r,o){var n,a,i,l=t.key,_=t.type,c=e[r],d=c!=null&&(2&c.__u)==0;if(c===null&&t.key==null||d&&l==c.key&&_==c.type)return r;if(o>(d?1:0)){for(n=r-1,a=r+1;n>=0||a<e.length;)if((c=e[i=n>=0?n--:a++])!=null&&(2&c.__u)==0&&l==c.key&&_==c.type)return i}return-1}function mt(t,e,r){e[0]=="-"?t.setProperty(e,r??""):t[e]=r==null?"":typeof r!="number"||re.test(e)?r:r+"px"}function B(t,e,r,o,n){var a,i;t:if(e=="style")if(typeof r=="string")t.style.cssText=r;else{if(typeof o=="string"&&(t.style.cssText=o=""),o)for(e in o)r&&e in r||mt(t.style,e,"");if(r)for(e in r)o&&r[e]==o[e]||mt(t.style,e,r[e])}else if(e[0]=="o"&&e[1]=="n")a=e!=(e=e.replace(yt,"$1")),i=e.toLowerCase(),e=i in t||e=="onFocusOut"||e=="onFocusIn"?i.slice(2):e.slice(2),t.l||(t.l={}),t.l[e+a]=r,r?o?r.u=o.u:(r.u=at,t.addEventListener(e,a?ot:rt,a)):t.removeEventListener(e,a?ot:rt,a);else{if(n=="http://www.w3.org/2000/svg")e=e.replace(/xlink(H|:h)/,"h").replace(/sName$/,"s");else if(e!="width"&&e!="height"&&e!="href"&&e!="list"&&e!="form"&&e!="tabIndex"&&e!="download"&&e!="rowSpan"&&e!="colSpan"&&e!="role"&&e!="popover"&&e in t)try{t[e]=r??"";break t}catch{}typeof r=="function"||(r==null||r===!1&&e[4]!="-"?t.removeAttribute(e):t.setAttribute(e,e=="popover"&&r==1?"":r))}}function bt(t){return function(e){if(this.l){var r=this.l[e.type+t];if(e.t==null)e.t=at++;else if(e.t<r.u)return;return r(y.event?y.event(e):e)}}}function lt(t,e,r,o,n,a,i,l,_,c){var d,s,p,f,b,k,h,m,v,P,S,I,R,g,E,z,et,N=e.type;if(e.constructor!=null)return null;128&r.__u&&(_=!!(32&r.__u),a=[l=e.__e=r.__e]),(d=y.__b)&&d(e);t:if(typeof N=="function")try{if(m=e.props,v="prototype"in N&&N.prototype.render,P=(d=N.contextType)&&o[d.__c],S=d?P?P.props.value:d.__:o,r.__c?h=(s=e.__c=r.__c).__=s.__E:(v?e.__c=s=new N(m,S):(e.__c=s=new G(m,S),s.constructor=N,s.render=se),P&&P.sub(s),s.props=m,s.state||(s.state={}),s.context=S,s.__n=o,p=s.__d=!0,s.__h=[],s._sb=[]),v&&s.__s==null&&(s.__s=s.state),v&&N.getDerivedStateFromProps!=null&&(s.__s==s.state&&(s.__s=L({},s.__s)),L(s.__s,N.getDerivedStateFromProps(m,s.__s))),f=s.props,b=s.state,s.__v=e,p)v&&N.getDerivedStateFromProps==null&&s.componentWillMount!=null&&s.componentWillMount(),v&&s.componentDidMount!=null&&s.__h.push(s.componentDidMount);else{if(v&&N.getDerivedStateFromProps==null&&m!==f&&s.componentWillReceiveProps!=null&&s.componentWillReceiveProps(m,S),!s.__e&&s.shouldComponentUpdate!=null&&s.shouldComponentUpdate(m,s.__s,S)===!1||e.__v==r.__v){for(e.__v!=r.__v&&(s.props=m,s.state=s.__s,s.__d=!1),e.__e=r.__e,e.__k=r.__k,e.__k.some(function(U){U&&(U.__=e)}),I=0;I<s._sb.length;I++)s.__h.push(s._sb[I]);s._sb=[],s.__h.length&&i.push(s);break t}s.componentWillUpdate!=null&&s.componentWillUpdate(m,s.__s,S),v&&s.componentDidUpdate!=null&&s.__h.push(function(){s.componentDidUpdate(f,b,k)})}if(s.context=S,s.props=m,s.__P=t,s.__e=!1,R=y.__r,g=0,v){for(s.state=s.__s,s.__d=!1,R&&R(e),d=s.render(s.props,s.state,s.context),E=0;E<s._sb.length;E++)s.__h.push(s._sb[E]);s._sb=[]}else do s.__d=!1,R&&R(e),d=s.render(s.props,s.state,s.context),s.state=s.__s;while(s.__d&&++g<25);s.state=s.__s,s.getChildContext!=null&&(o=L(L({},o),s.getChildContext())),v&&!p&&s.getSnapshotBeforeUpdate!=null&&(k=s.getSnapshotBeforeUpdate(f,b)),z=d,d!=null&&d.type===X&&d.key==null&&(z=St(d.props.children)),l=xt(t,Q(z)?z:[z],e,r,o,n,a,i,l,_,c),s.base=e.__e,e.__u&=-161,s.__h.length&&i.push(s),h&&(s.__E=s.__=null)}catch(U){if(e.__v=null,_||a!=null)if(U.then){for(e.__u|=_?160:128;l&&l.nodeType==8&&l.nextSibling;)l=l.nextSibling;a[a.indexOf(l)]=null,e.__e=l}else{for(et=a.length;et--;)st(a[et]);nt(e)}else e.__e=r.__e,e.__k=r.__k,U.then||nt(e);y.__e(U,e,r)}else a==null&&e.__v==r.__v?(e.__k=r.__k,e.__e=r.__e):l=e.__e=ae(r.__e,e,r,o,n,a,i,_,c);return(d=y.diffed)&&d(e),128&e.__u?void 0:l}function nt(t){t&&t.__c&&(t.__c.__e=!0),t&&t.__k&&t.__k.forEach(nt)}function Pt(t,e,r){for(var o=0;o<r.length;o++)ct(r[o],r[++o],r[++o]);y.__c&&y.__c(e,t),t.some(function(n){try{t=n.__h,n.__h=[],t.some(function(a){a.call(n)})}catch(a){y.__e(a,n.__v)}})}function St(t){return typeof t!="object"||t==null||t.__b&&t.__b>0?t:Q(t)?t.map(St):L({},t)}function ae(t,e,r,o,n,a,i,l,_){var c,d,s,p,f,b,k,h=r.props,m=e.props,v=e.type;if(v=="svg"?n="http://www.w3.org/2000/svg":v=="math"?n="http://www.w3.org/1998/Math/MathML":n||(n="http://www.w3.org/1999/xhtml"),a!=null){for(c=0;c<a.length;c++)if((f=a[c])&&"setAttribute"in f==!!v&&(v?f.localName==v:f.nodeType==3)){t=f,a[c]=null;break}}if(t==null){if(v==null)return document.createTextNode(m);t=document.createElementNS(n,v,m.is&&m),l&&(y.__m&&y.__m(e,a),l=!1),a=null}if(v==null)h===m||l&&t.data==m||(t.data=m);else{if(a=a&&K.call(t.childNodes),h=r.props||F,!l&&a!=null)for(h={},c=0;c<t.attributes.length;c++)h[(f=t.attributes[c]).name]=f.value;for(c in h)if(f=h[c],c!="children"){if(c=="dangerouslySetInnerHTML")s=f;else if(!(c in m)){if(c=="value"&&"defaultValue"in m||c=="checked"&&"defaultChecked"in m)continue;B(t,c,null,f,n)}}for(c in m)f=m[c],c=="children"?p=f:c=="dangerouslySetInnerHTML"?d=f:c=="value"?b=f:c=="checked"?k=f:l&&typeof f!="function"||h[c]===f||B(t,c,f,h[c],n);if(d)l||s&&(d.__html==s.__html||d.__html==t.innerHTML)||(t.innerHTML=d.__html),e.__k=[];else if(s&&(t.innerHTML=""),xt(e.type=="template"?t.content:t,Q(p)?p:[p],e,r,o,v=="foreignObject"?"http://www.w3.org/1999/xhtml":n,a,i,a?a[0]:r.__k&&q(r,0),l,_),a!=null)for(c=a.length;c--;)st(a[c]);l||(c="value",v=="progress"&&b==null?t.removeAttribute("value"):b!=null&&(b!==t[c]||v=="progress"&&!b||v=="option"&&b!=h[c])&&B(t,c,b,h[c],n),c="checked",k!=null&&k!=t[c]&&B(t,c,k,h[c],n))}return t}function ct(t,e,r){try{if(typeof t=="function"){var o=typeof t.__u=="function";o&&t.__u(),o&&e==null||(t.__u=t(e))}else t.current=e}catch(n){y.__e(n,r)}}function Et(t,e,r){var o,n;if(y.unmount&&y.unmount(t),(o=t.ref)&&(o.current&&o.current!=t.__e||ct(o,null,e)),(o=t.__c)!=null){if(o.componentWillUnmount)try{o.componentWillUnmount()}catch(a){y.__e(a,e)}o.base=o.__P=null}if(o=t.__k)for(n=0;n<o.length;n++)o[n]&&Et(o[n],e,r||typeof t.type!="function");r||st(t.__e),t.__c=t.__=t.__e=void 0}function se(t,e,r){return this.constructor(t,r)}function Tt(t,e,r){var o,n,a,i;e==document&&(e=document.documentElement),y.__&&y.__(t,e),n=(o=typeof r=="function")?null:r&&r.__k||e.__k,a=[],i=[],lt(e,t=(!o&&r||e).__k=it(X,null,[t]),n||F,F,e.namespaceURI,!o&&r?[r]:n?null:e.firstChild?K.call(e.childNodes):null,a,!o&&r?r:n?n.__e:e.firstChild,o,i),Pt(a,t,i)}K=wt.slice,y={__e:function(t,e,r,o){for(var n,a,i;e=e.__;)if((n=e.__c)&&!n.__)try{if((a=n.constructor)&&a.getDerivedStateFromError!=null&&(n.setState(a.getDerivedStateFromError(t)),i=n.__d),n.componentDidCatch!=null&&(n.componentDidCatch(t,o||{}),i=n.__d),i)return n.__E=n}catch(l){t=l}throw t}},$t=0,te=function(t){return t!=null&&t.constructor==null},G.prototype.setState=function(t,e){var r;r=this.__s!=null&&this.__s!=this.state?this.__s:this.__s=L({},this.state),typeof t=="function"&&(t=t(L({},r),this.props)),t&&L(r,t),t!=null&&this.__v&&(e&&this._sb.push(e),ht(this))},G.prototype.forceUpdate=function(t){this.__v&&(this.__e=!0,t&&this.__h.push(t),ht(this))},G.prototype.render=X,A=[],gt=typeof Promise=="function"?Promise.prototype.then.bind(Promise.resolve()):setTimeout,vt=function(t,e){return t.__v.__b-e.__v.__b},J.__r=0,yt=/(PointerCapture)$|Capture$/i,at=0,rt=bt(!1),ot=bt(!0),ee=0;var j,w,ut,It,Z=0,At=[],x=y,Nt=x.__b,Lt=x.__r,Mt=x.diffed,Ht=x.__c,Ot=x.unmount,Dt=x.__;function _t(t,e){x.__h&&x.__h(w,t,Z||e),Z=0;var r=w.__H||(w.__H={__:[],__h:[]});return t>=r.__.length&&r.__.push({}),r.__[t]}function $(t){return Z=1,ie(zt,t)}function ie(t,e,r){var o=_t(j++,2);if(o.t=t,!o.__c&&(o.__=[r?r(e):zt(void 0,e),function(l){var _=o.__N?o.__N[0]:o.__[0],c=o.t(_,l);_!==c&&(o.__N=[c,o.__[1]],o.__c.setState({}))}],o.__c=w,!w.__f)){var n=function(l,_,c){if(!o.__c.__H)return!0;var d=o.__c.__H.__.filter(function(p){return!!p.__c});if(d.every(function(p){return!p.__N}))return!a||a.call(this,l,_,c);var s=o.__c.props!==l;return d.forEach(function(p){if(p.__N){var f=p.__[0];p.__=p.__N,p.__N=void 0,f!==p.__[0]&&(s=!0)}}),a&&a.call(this,l,_,c)||s};w.__f=!0;var a=w.shouldComponentUpdate,i=w.componentWillUpdate;w.componentWillUpdate=function(l,_,c){if(this.__e){var d=a;a=void 0,n(l,_,c),a=d}i&&i.call(this,l,_,c)},w.shouldComponentUpdate=n}return o.__N||o.__}function W(t,e){var r=_t(j++,3);!x.__s&&qt(r.__H,e)&&(r.__=t,r.u=e,w.__H.__h.push(r))}function le(t,e){var r=_t(j++,7);return qt(r.__H,e)&&(r.__=t(),r.__H=e,r.__h=t),r.__}function Ut(t,e){return Z=8,le(function(){return t},e)}function ce(){for(var t;t=At.shift();)if(t.__P&&t.__H)try{t.__H.__h.forEach(Y),t.__H.__h.forEach(dt),t.__H.__h=[]}catch(e){t.__H.__h=[],x.__e(e,t.__v)}}x.__b=function(t){w=null,Nt&&Nt(t)},x.__=function(t,e){t&&e.__k&&e.__k.__m&&(t.__m=e.__k.__m),Dt&&Dt(t,e)},x.__r=function(t){Lt&&Lt(t),j=0;var e=(w=t.__c).__H;e&&(ut===w?(e.__h=[],w.__h=[],e.__.forEach(function(r){r.__N&&(r.__=r.__N),r.u=r.__N=void 0})):(e.__h.forEach(Y),e.__h.forEach(dt),e.__h=[],j=0)),ut=w},x.diffed=function(t){Mt&&Mt(t);var e=t.__c;e&&e.__H&&(e.__H.__h.length&&(At.push(e)!==1&&It===x.requestAnimationFrame||((It=x.requestAnimationFrame)||ue)(ce)),e.__H.__.forEach(function(r){r.u&&(r.__H=r.u),r.u=void 0})),ut=w=null},x.__c=function(t,e){e.some(function(r){try{r.__h.forEach(Y),r.__h=r.__h.filter(function(o){return!o.__||dt(o)})}catch(o){e.some(function(n){n.__h&&(n.__h=[])}),e=[],x.__e(o,r.__v)}}),Ht&&Ht(t,e)},x.unmount=function(t){Ot&&Ot(t);var e,r=t.__c;r&&r.__H&&(r.__H.__.forEach(function(o){try{Y(o)}catch(n){e=n}}),r.__H=void 0,e&&x.__e(e,r.__v))};var Rt=typeof requestAnimationFrame=="function";function ue(t){var e,r=function(){clearTimeout(o),Rt&&cancelAnimationFrame(e),setTimeout(t)},o=setTimeout(r,35);Rt&&(e=requestAnimationFrame(r))}function Y(t){var e=w,r=t.__c;typeof r=="function"&&(t.__c=void 0,r()),w=e}function dt(t){var e=w;t.__c=t.__(),w=e}function qt(t,e){return!t||t.length!==e.length||e.some(function(r,o){return r!==t[o]})}function zt(t,e){return typeof e=="function"?e(t):e}var jt=function(t,e,r,o){var n;e[0]=0;for(var a=1;a<e.length;a++){var i=e[a++],l=e[a]?(e[0]|=i?1:2,r[e[a++]]):e[++a];i===3?o[0]=l:i===4?o[1]=Object.assign(o[1]||{},l):i===5?(o[1]=o[1]||{})[e[++a]]=l:i===6?o[1][e[++a]]+=l+"":i?(n=t.apply(l,jt(t,l,r,["",null])),o.push(n),l[0]?e[0]|=2:(e[a-2]=0,e[a]=n)):o.push(l)}return o},Ft=new Map;function Wt(t){var e=Ft.get(this);return e||(e=new Map,Ft.set(this,e)),(e=jt(this,e.get(t)||(e.set(t,e=(function(r){for(var o,n,a=1,i="",l="",_=[0],c=function(p){a===1&&(p||(i=i.replace(/^\s*\n\s*|\s*\n\s*$/g,"")))?_.push(0,p,i):a===3&&(p||i)?(_.push(3,p,i),a=2):a===2&&i==="..."&&p?_.push(4,p,0):a===2&&i&&!p?_.push(5,0,!0,i):a>=5&&((i||!p&&a===5)&&(_.push(a,0,i,n),a=6),p&&(_.push(a,p,0,n),a=6)),i=""},d=0;d<r.length;d++){d&&(a===1&&c(),c(d));for(var s=0;s<r[d].length;s++)o=r[d][s],a===1?o==="<"?(c(),_=[_],a=3):i+=o:a===4?i==="--"&&o===">"?(a=1,i=""):i=o+i[0]:l?o===l?l="":i+=o:o==='"'||o==="'"?l=o:o===">"?(c(),a=1):a&&(o==="="?(a=5,n=i,i=""):o==="/"&&(a<5||r[d][s+1]===">")?(c(),a===3&&(_=_[0]),a=_,(_=_[0]).push(2,0,a),a=0):o===" "||o==="	"||o===`
`||o==="\r"?(c(),a=2):i+=o),a===3&&i==="!--"&&(a=4,_=_[0])}return c(),_})(t)),e),arguments,[])).length>1?e:e[0]}var u=Wt.bind(it),de=5e3;async function H(t,e,r){let o={method:t,headers:{}};t!=="GET"&&(o.headers["X-Strata-Console"]="1"),r!==void 0&&(o.headers["Content-Type"]="application/json",o.body=JSON.stringify(r));let n=await fetch("/api/v1"+e,o);if(n.status===204)return null;let a=null;try{a=await n.json()}catch{}if(!n.ok){let i=a&&a.error?a.error:n.status+" "+n.statusText,l=new Error(i);throw l.code=a&&a.code,l}return a}function M(t,e=!0){let[r,o]=$({data:null,error:null}),n=Ut(()=>{t&&H("GET",t).then(a=>o({data:a,error:null}),a=>o(i=>({data:i.data,error:a})))},[t]);return W(()=>{if(o({data:null,error:null}),n(),!e)return;let a=setInterval(n,de);return()=>clearInterval(a)},[n,e]),[r.data,r.error,n]}function Bt(){let[t,e]=$(location.hash);return W(()=>{let r=()=>e(location.hash);return addEventListener("hashchange",r),()=>removeEventListener("hashchange",r)},[]),(t.replace(/^#/,"")||"/").split("/").filter(Boolean).map(decodeURIComponent)}var C=encodeURIComponent;function O({error:t}){return t?u`<p class="error" role="alert">${t.message}${t.code?u` <code>${t.code}</code>`:""}</p>`:null}function D({data:t,error:e}){return t?null:e?u`<${O} error=${e} />`:u`<p class="muted">Loading…</p>`}function T({label:t,value:e,warn:r,href:o}){let n="stat"+(r?" warn":""),a=u`<span class="stat-value">${e}</span><span class="stat-label">${t}</span>`;return o?u`<a class=${n+" stat-link"} href=${o}>${a}</a>`:u`<div class=${n}>${a}</div>`}function tt(t,e){let r=[];for(let o of t.split(`
`)){if(!o.trim())continue;let n=o.indexOf(e);if(n<1)throw new Error(`"${o}" is not key${e}value`);r.push([o.slice(0,n).trim(),o.slice(n+1).trim()])}return r}var Gt=[{state:"under-replicated",field:"underReplicatedPartitions",label:"Under-replicated"},{state:"offline",field:"offlinePartitions",label:"Offline"},{state:"non-preferred-leader",field:"nonPreferredLeaderPartitions",label:"Not on preferred leader"}];function Jt(t){return t<0?"—":t<1e3?"now":t<12e4?Math.round(t/1e3)+" s ago":Math.round(t/6e4)+" min ago"}function _e({status:t}){return u`<span class=${"badge status-"+t}>${t}</span>`}function Kt({label:t,page:e,pageSize:r,total:o,setPage:n,noun:a}){let i=Math.max(1,Math.ceil(o/r));return u`<nav class="pager" aria-label=${t}>
    <button type="button" disabled=${e<=1} onClick=${()=>n(e-1)}>Previous</button>
    <span>Page ${e} of ${i} · ${o} ${a}</span>
    <button type="button" disabled=${e>=i} onClick=${()=>n(e+1)}>Next</button>
  </nav>`}function Vt({id:t,members:e,leaderId:r,caption:o}){return e.length===0?u`<p class="muted">No ${o.toLowerCase()}.</p>`:u`<div class="scroll"><table id=${t} aria-label=${o}>
    <thead><tr><th>Node</th><th>Raft role</th><th>Log end</th><th>Lag (entries)</th><th>Last heard</th></tr></thead>
    <tbody>${e.map(n=>u`<tr key=${n.nodeId} class=${n.lastContactMs>5e3||n.lastContactMs<0?"warn":""}>
      <td>${n.nodeId}</td><td>${n.nodeId===r?"leader":t==="quorum-voters"?"follower":"observer"}</td>
      <td>${n.logEndOffset<0?"—":n.logEndOffset}</td><td>${n.lag<0?"—":n.lag}</td><td>${Jt(n.lastContactMs)}</td></tr>`)}</tbody>
  </table></div>`}function Qt(){let[t,e]=M("/cluster"),r=t?t.nodes.filter(o=>o.status==="alive").length:0;return u`<section>
    <h1>Cluster</h1>
    <${D} data=${t} error=${e} />
    ${t&&u`
      <p class="muted">Cluster id <code>${t.clusterId}</code> · served by node ${t.node}</p>
      ${e&&u`<${O} error=${e} />`}
      <div class="stats">
        <${T} label="Nodes alive" value=${r+" / "+t.nodes.length} warn=${r<t.nodes.length} />
        <${T} label="Controller" value=${t.controller<0?"none":t.controller} warn=${t.controller<0} />
        <${T} label="Raft epoch" value=${t.quorum.leaderEpoch<0?"—":t.quorum.leaderEpoch} />
        <${T} label="Topics" value=${t.topics} href="#/topics" />
        <${T} label="Partitions" value=${t.partitions} />
        ${Gt.map(o=>u`<${T} key=${o.state} label=${o.label} value=${t[o.field]} warn=${t[o.field]>0}
          href=${"#/cluster/partitions/"+o.state} />`)}
      </div>
      <h2>Nodes</h2>
      <div class="scroll"><table id="cluster-nodes">
        <thead><tr><th>Node</th><th>Address</th><th>Rack</th><th>Roles</th><th>Status</th><th>Last heard</th></tr></thead>
        <tbody>${t.nodes.map(o=>u`<tr key=${o.nodeId} class=${o.status==="alive"?"":"warn"}>
          <td>${o.nodeId}${o.nodeId===t.node?u` <span class="badge">this console</span>`:""}</td>
          <td>${o.port<0?"—":o.host+":"+o.port}</td><td>${o.rack||"—"}</td>
          <td>${o.roles.join(", ")}${o.activeController?u` <span class="badge">active controller</span>`:""}</td>
          <td><${_e} status=${o.status} /></td><td>${Jt(o.lastContactMs)}</td></tr>`)}</tbody>
      </table></div>
      <h2>Metadata quorum</h2>
      ${t.quorum.error?u`<p class="error" role="alert">The quorum could not be described: ${t.quorum.error}</p>`:u`<p class="muted" id="quorum-summary">Raft leader node ${t.quorum.leaderId} in epoch ${t.quorum.leaderEpoch};
            committed up to entry ${t.quorum.highWatermark}; controllers (voters) ${t.controllers.join(", ")}.</p>
          <${Vt} id="quorum-voters" members=${t.quorum.voters} leaderId=${t.quorum.leaderId} caption="Voters" />
          <h3>Observers</h3>
          <${Vt} id="quorum-observers" members=${t.quorum.observers} leaderId=${t.quorum.leaderId} caption="Observers" />`}
      <p class="muted">Partition counts from metadata ${Math.round(t.metadataAgeMs/100)/10} s old.</p>`}
  </section>`}function Xt({state:t}){let[e,r]=$(1),o=50,n=Gt.find(l=>l.state===t),[a,i]=M(`/cluster/partitions?state=${C(t)}&page=${e}&pageSize=${o}`);return u`<section>
    <p class="crumbs"><a href="#/">Cluster</a> /</p>
    <h1>${n?n.label:t} partitions</h1>
    <${D} data=${a} error=${i} />
    ${a&&u`
      <div class="scroll"><table id="problem-partitions">
        <thead><tr><th>Topic</th><th>Partition</th><th>Leader</th><th>Replicas</th><th>ISR</th><th>Offline replicas</th></tr></thead>
        <tbody>${a.partitions.map(l=>u`<tr key=${l.topic+"/"+l.partition}>
          <td><a href=${"#/topics/"+C(l.topic)}>${l.topic}</a></td><td>${l.partition}</td><td>${l.leader<0?"none":l.leader}</td>
          <td>${l.replicas.join(", ")}</td><td>${l.isr.join(", ")}</td><td>${l.offlineReplicas.join(", ")||"—"}</td></tr>`)}</tbody>
      </table></div>
      ${a.total===0&&u`<p class="ok" role="status">None.</p>`}
      <${Kt} label="Partition pages" page=${e} pageSize=${o} total=${a.total} setPage=${r} noun="partitions" />`}
  </section>`}var pe=/^[a-zA-Z0-9._-]{1,249}$/;function fe({onCreated:t}){let[e,r]=$(""),[o,n]=$("1"),[a,i]=$("1"),[l,_]=$(""),[c,d]=$(null),[s,p]=$(!1);return u`<form class="card" onSubmit=${async b=>{b.preventDefault(),d(null);try{if(!pe.test(e)||e==="."||e==="..")throw new Error('Topic names use 1 to 249 of: letters, digits, ".", "_", "-".');let k=Number(o),h=Number(a);if(!Number.isInteger(k)||k<1)throw new Error("Partitions must be a whole number of at least 1.");if(!Number.isInteger(h)||h<1)throw new Error("Replication factor must be a whole number of at least 1.");let m=Object.fromEntries(tt(l,"="));p(!0),await H("POST","/topics",{name:e,partitions:k,replicationFactor:h,configs:m}),r(""),t(e)}catch(k){d(k)}finally{p(!1)}}} aria-labelledby="create-topic">
    <h2 id="create-topic">Create a topic</h2>
    <div class="fields">
      <label>Name<input id="new-topic-name" value=${e} onInput=${b=>r(b.target.value)} required /></label>
      <label>Partitions<input id="new-topic-partitions" type="number" min="1" value=${o} onInput=${b=>n(b.target.value)} /></label>
      <label>Replication factor<input id="new-topic-rf" type="number" min="1" value=${a} onInput=${b=>i(b.target.value)} /></label>
    </div>
    <label><span>Configs (one <code>name=value</code> per line)</span><textarea rows="2" value=${l} onInput=${b=>_(b.target.value)} placeholder="retention.ms=86400000"></textarea></label>
    <${O} error=${c} />
    <button id="create-topic-submit" type="submit" disabled=${s}>Create topic</button>
  </form>`}function Yt(){let[t,e]=$(""),[r,o]=$(1),[n,a]=$(null),i=25,[l,_,c]=M(`/topics?search=${C(t)}&page=${r}&pageSize=${i}`);return u`<section>
    <h1>Topics</h1>
    <div class="toolbar">
      <label class="search">Search<input type="search" id="topic-search" value=${t}
        onInput=${d=>{e(d.target.value),o(1)}} placeholder="name contains…" /></label>
    </div>
    <${D} data=${l} error=${_} />
    ${l&&u`
      <div class="scroll"><table>
        <thead><tr><th>Name</th><th>Partitions</th><th>Replication</th><th></th></tr></thead>
        <tbody>${l.topics.map(d=>u`<tr key=${d.name}>
          <td><a href=${"#/topics/"+C(d.name)}>${d.name}</a>${d.internal?u` <span class="badge">internal</span>`:""}</td>
          <td>${d.partitions}</td><td>${d.replicationFactor}</td>
          <td><a href=${"#/topics/"+C(d.name)+"/messages"}>Messages</a></td></tr>`)}</tbody>
      </table></div>
      ${l.topics.length===0&&u`<p class="muted">No topics${t?" match":""}.</p>`}
      <${Kt} label="Topic pages" page=${r} pageSize=${i} total=${l.total} setPage=${o} noun="topics" />`}
    ${n&&u`<p class="ok" role="status">Created <a href=${"#/topics/"+C(n)}>${n}</a>.</p>`}
    <${fe} onCreated=${d=>{a(d),c()}} />
  </section>`}function Zt({what:t,name:e,onDelete:r}){let[o,n]=$(!1),[a,i]=$(""),[l,_]=$(null);return o?u`<form class="card danger-zone" onSubmit=${async d=>{d.preventDefault();try{await r()}catch(s){_(s)}}}>
    <label><span>Type <code>${e}</code> to delete this ${t}</span><input value=${a} onInput=${d=>i(d.target.value)} /></label>
    <${O} error=${l} />
    <button type="submit" class="danger" disabled=${a!==e}>Delete ${t} ${e}</button>
    <button type="button" onClick=${()=>n(!1)}>Cancel</button>
  </form>`:u`<button type="button" class="danger" onClick=${()=>n(!0)}>Delete ${t}…</button>`}function he({name:t}){let[e,r]=M("/topics/"+C(t)),o=async()=>{await H("DELETE","/topics/"+C(t)),location.hash="#/topics"};return u`<section>
    <p class="crumbs"><a href="#/topics">Topics</a> /</p>
    <h1>${t}</h1>
    <${D} data=${e} error=${r} />
    ${e&&u`
      <p><a class="button" href=${"#/topics/"+C(t)+"/messages"}>Browse messages</a></p>
      <h2>Partitions</h2>
      <div class="scroll"><table>
        <thead><tr><th>Partition</th><th>Leader</th><th>Replicas</th><th>ISR</th><th>Log start</th><th>High watermark</th><th>Records</th></tr></thead>
        <tbody>${e.partitions.map(n=>u`<tr key=${n.partition} class=${n.isr.length<n.replicas.length?"warn":""}>
          <td>${n.partition}</td><td>${n.leader<0?"none":n.leader}</td><td>${n.replicas.join(", ")}</td><td>${n.isr.join(", ")}</td>
          <td>${n.logStartOffset}</td><td>${n.highWatermark}</td><td>${Math.max(0,n.highWatermark-n.logStartOffset)}</td></tr>`)}</tbody>
      </table></div>
      <h2>Configs</h2>
      <div class="scroll"><table>
        <thead><tr><th>Name</th><th>Value</th><th>Source</th></tr></thead>
        <tbody>${e.configs.map(n=>u`<tr key=${n.name} class=${n.source==="DYNAMIC_TOPIC_CONFIG"?"set":""}>
          <td>${n.name}</td><td class="wrap">${n.sensitive?"(sensitive)":n.value??"—"}</td><td>${n.source}</td></tr>`)}</tbody>
      </table></div>
      ${!e.internal&&u`<${Zt} what="topic" name=${t} onDelete=${o} />`}`}
  </section>`}function me(t){return t.encoding==="base64"?Uint8Array.from(atob(t.data),e=>e.charCodeAt(0)):new TextEncoder().encode(t.data)}function pt(t,e){return t==null?u`<span class="muted">null</span>`:e==="hex"?[...me(t)].map(r=>r.toString(16).padStart(2,"0")).join(" "):t.encoding==="base64"?u`<span class="badge">base64</span> ${t.data}`:e==="json"&&t.json?u`<pre>${JSON.stringify(JSON.parse(t.data),null,2)}</pre>`:t.data}function be({topic:t,partitions:e,onProduced:r}){let[o,n]=$(""),[a,i]=$(""),[l,_]=$(""),[c,d]=$(""),[s,p]=$(null),[f,b]=$(null);return u`<form class="card" onSubmit=${async h=>{h.preventDefault(),b(null),p(null);try{let m={key:a===""?null:{data:a},value:{data:l},headers:tt(c,":").map(([P,S])=>({key:P,value:{data:S}}))};o!==""&&(m.partition=Number(o));let v=await H("POST","/topics/"+C(t)+"/records",m);p(v),r(v)}catch(m){b(m)}}} aria-labelledby="produce">
    <h2 id="produce">Produce a record</h2>
    <div class="fields">
      <label>Partition<select id="produce-partition" value=${o} onChange=${h=>n(h.target.value)}>
        <option value="">by key</option>
        ${Array.from({length:e},(h,m)=>u`<option value=${m}>${m}</option>`)}
      </select></label>
      <label>Key<input id="produce-key" value=${a} onInput=${h=>i(h.target.value)} placeholder="(none)" /></label>
    </div>
    <label>Value<textarea id="produce-value" rows="3" value=${l} onInput=${h=>_(h.target.value)}></textarea></label>
    <label><span>Headers (one <code>name: value</code> per line)</span><textarea rows="2" value=${c} onInput=${h=>d(h.target.value)}></textarea></label>
    <${O} error=${f} />
    ${s&&u`<p class="ok" role="status" id="produce-result">Produced to partition ${s.partition} at offset ${s.offset}.</p>`}
    <button id="produce-submit" type="submit">Produce</button>
  </form>`}function $e({topic:t}){let[e]=M("/topics/"+C(t),!1),[r,o]=$("0"),[n,a]=$("start"),[i,l]=$("0"),[_,c]=$(""),[d,s]=$("50"),[p,f]=$("text"),[b,k]=$(null),[h,m]=$(null),[v,P]=$(null),S=()=>{let g=`?partition=${r}&limit=${d}`;return n==="offset"&&(g+="&offset="+C(i)),n==="time"&&(g+="&timestamp="+(_?new Date(_).getTime():0)),n==="end"&&(g+="&fromEnd=true"),g},I=g=>{k(g),H("GET","/topics/"+C(t)+"/records"+g).then(E=>{m(E),P(null)},P)};W(()=>{I(S())},[t]);let R=h&&h.nextOffset<h.highWatermark;return u`<section>
    <p class="crumbs"><a href="#/topics">Topics</a> / <a href=${"#/topics/"+C(t)}>${t}</a> /</p>
    <h1>Messages</h1>
    <form class="card" onSubmit=${g=>{g.preventDefault(),I(S())}}>
      <div class="fields">
        <label>Partition<select id="browse-partition" value=${r} onChange=${g=>o(g.target.value)}>
          ${Array.from({length:e?e.partitions.length:1},(g,E)=>u`<option value=${E}>${E}</option>`)}
        </select></label>
        <label>From<select id="browse-from" value=${n} onChange=${g=>a(g.target.value)}>
          <option value="start">the log start</option><option value="offset">an offset</option>
          <option value="time">a time</option><option value="end">the end</option>
        </select></label>
        ${n==="offset"&&u`<label>Offset<input type="number" min="0" value=${i} onInput=${g=>l(g.target.value)} /></label>`}
        ${n==="time"&&u`<label>Time<input type="datetime-local" value=${_} onInput=${g=>c(g.target.value)} /></label>`}
        <label>Limit<input type="number" min="1" max="500" value=${d} onInput=${g=>s(g.target.value)} /></label>
        <label>Decode as<select id="browse-decode" value=${p} onChange=${g=>f(g.target.value)}>
          <option value="text">text</option><option value="json">JSON (pretty)</option><option value="hex">hex</option>
        </select></label>
      </div>
      <button type="submit" id="browse-submit">Load</button>
      ${b&&u` <button type="button" onClick=${()=>I(b)}>Refresh</button>`}
    </form>
    <${O} error=${v} />
    ${h&&u`
      <p class="muted">Partition ${h.partition}: offsets ${h.logStartOffset} to ${h.highWatermark-1}; showing ${h.records.length} from ${h.startOffset}.</p>
      <div class="scroll"><table class="records">
        <thead><tr><th>Offset</th><th>Timestamp</th><th>Key</th><th>Value</th><th>Headers</th></tr></thead>
        <tbody>${h.records.map(g=>u`<tr key=${g.offset}>
          <td>${g.offset}</td><td>${new Date(g.timestamp).toISOString()}</td>
          <td class="wrap">${pt(g.key,p)}</td><td class="wrap value">${pt(g.value,p)}</td>
          <td class="wrap">${g.headers.map(E=>u`<div><b>${E.key}</b>: ${pt(E.value,p)}</div>`)}</td></tr>`)}</tbody>
      </table></div>
      ${h.records.length===0&&u`<p class="muted">No records there.</p>`}
      ${R&&u`<button type="button" onClick=${()=>I(`?partition=${h.partition}&limit=${d}&offset=${h.nextOffset}`)}>Next records</button>`}`}
    ${e&&u`<${be} topic=${t} partitions=${e.partitions.length} onProduced=${()=>b&&I(b)} />`}
  </section>`}function ge(){let[t,e]=M("/groups");return u`<section>
    <h1>Consumer groups</h1>
    <${D} data=${t} error=${e} />
    ${t&&u`
      <div class="scroll"><table>
        <thead><tr><th>Group</th><th>State</th><th>Protocol</th><th>Coordinator</th></tr></thead>
        <tbody>${t.groups.map(r=>u`<tr key=${r.group}>
          <td><a href=${"#/groups/"+C(r.group)}>${r.group}</a></td><td>${r.state}</td><td>${r.protocolType||"—"}</td><td>${r.coordinator}</td></tr>`)}</tbody>
      </table></div>
      ${t.groups.length===0&&u`<p class="muted">No groups.</p>`}`}
  </section>`}function ve({name:t}){let[e,r]=M("/groups/"+C(t)),o=async()=>{await H("DELETE","/groups/"+C(t)),location.hash="#/groups"};return u`<section>
    <p class="crumbs"><a href="#/groups">Consumer groups</a> /</p>
    <h1>${t}</h1>
    <${D} data=${e} error=${r} />
    ${e&&u`
      <div class="stats">
        <${T} label="State" value=${e.state} />
        <${T} label="Members" value=${e.members.length} />
        <${T} label="Total lag" value=${e.totalLag} warn=${e.totalLag>0} />
        <${T} label="Coordinator" value=${e.coordinator} />
      </div>
      <h2>Lag per partition</h2>
      <div class="scroll"><table id="group-lag">
        <thead><tr><th>Topic</th><th>Partition</th><th>Committed</th><th>Log end</th><th>Lag</th><th>Member</th></tr></thead>
        <tbody>${e.offsets.map(n=>u`<tr key=${n.topic+"/"+n.partition}>
          <td><a href=${"#/topics/"+C(n.topic)}>${n.topic}</a></td><td>${n.partition}</td>
          <td>${n.committedOffset<0?"—":n.committedOffset}</td><td>${n.logEndOffset}</td>
          <td class=${n.lag>0?"lag":""}>${n.lag<0?"?":n.lag}</td><td class="wrap">${n.memberId||"—"}</td></tr>`)}</tbody>
      </table></div>
      <h2>Members</h2>
      <div class="scroll"><table>
        <thead><tr><th>Member</th><th>Client</th><th>Host</th><th>Assigned</th></tr></thead>
        <tbody>${e.members.map(n=>u`<tr key=${n.memberId}>
          <td class="wrap">${n.memberId}</td><td>${n.clientId}</td><td>${n.clientHost}</td>
          <td>${n.assigned.map(a=>u`<div>${a.topic}: ${a.partitions.join(", ")}</div>`)}</td></tr>`)}</tbody>
      </table></div>
      ${e.members.length===0&&u`<p class="muted">No members.</p>`}
      <${Zt} what="group" name=${t} onDelete=${o} />`}
  </section>`}function ye(){let t=Bt(),e,r="cluster";t[0]==="topics"&&t[1]&&t[2]==="messages"?(e=u`<${$e} topic=${t[1]} />`,r="topics"):t[0]==="topics"&&t[1]?(e=u`<${he} name=${t[1]} />`,r="topics"):t[0]==="cluster"&&t[1]==="partitions"&&t[2]?e=u`<${Xt} state=${t[2]} />`:t[0]==="topics"?(e=u`<${Yt} />`,r="topics"):t[0]==="groups"&&t[1]?(e=u`<${ve} name=${t[1]} />`,r="groups"):t[0]==="groups"?(e=u`<${ge} />`,r="groups"):e=u`<${Qt} />`;let o=(n,a,i)=>u`<a href=${a} aria-current=${r===n?"page":void 0}>${i}</a>`;return u`<header>
      <a class="brand" href="#/">Strata</a>
      <nav aria-label="Main">${o("cluster","#/","Cluster")}${o("topics","#/topics","Topics")}${o("groups","#/groups","Groups")}</nav>
    </header>
    <main>${e}</main>`}Tt(u`<${ye} />`,document.getElementById("app"));})();
