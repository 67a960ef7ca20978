(()=>{var Y,w,vt,pe,q,mt,yt,wt,kt,st,ot,at,_e,z={},Ct=[],fe=/acit|ex(?:s|g|n|p|$)|rph|grid|ows|mnc|ntw|ine[ch]|zoo|^ord|itera/i,X=Array.isArray;function D(t,e){for(var r in e)t[r]=e[r];return t}function lt(t){t&&t.parentNode&&t.parentNode.removeChild(t)}function it(t,e,r){var o,a,n,s={};for(n in e)n=="key"?o=e[n]:n=="ref"?a=e[n]:s[n]=e[n];if(arguments.length>2&&(s.children=arguments.length>3?Y.call(arguments,2):r),typeof t=="function"&&t.defaultProps!=null)for(n in t.defaultProps)s[n]===void 0&&(s[n]=t.defaultProps[n]);return J(t,s,o,a,null)}function J(t,e,r,o,a){var n={type:t,props:e,key:r,ref:o,__k:null,__:null,__b:0,__e:null,__c:null,constructor:void 0,__v:a??++vt,__i:-1,__u:0};return a==null&&w.vnode!=null&&w.vnode(n),n}function Z(t){return t.children}function Q(t,e){this.props=t,this.context=e}function F(t,e){if(e==null)return t.__?F(t.__,t.__i+1):null;for(var r;e<t.__k.length;e++)if((r=t.__k[e])!=null&&r.__e!=null)return r.__e;return typeof t.type=="function"?F(t):null}function xt(t){var e,r;if((t=t.__)!=null&&t.__c!=null){for(t.__e=t.__c.base=null,e=0;e<t.__k.length;e++)if((r=t.__k[e])!=null&&r.__e!=null){t.__e=t.__c.base=r.__e;break}return xt(t)}}function bt(t){(!t.__d&&(t.__d=!0)&&q.push(t)&&!K.__r++||mt!=w.debounceRendering)&&((mt=w.debounceRendering)||yt)(K)}function K(){for(var t,e,r,o,a,n,s,i=1;q.length;)q.length>i&&q.sort(wt),t=q.shift(),i=q.length,t.__d&&(r=void 0,o=void 0,a=(o=(e=t).__v).__e,n=[],s=[],e.__P&&((r=D({},o)).__v=o.__v+1,w.vnode&&w.vnode(r),ct(e.__P,r,o,e.__n,e.__P.namespaceURI,32&o.__u?[a]:null,n,a??F(o),!!(32&o.__u),s),r.__v=o.__v,r.__.__k[r.__i]=r,St(n,r,s),o.__e=o.__=null,r.__e!=a&&xt(r)));K.__r=0}function Et(t,e,r,o,a,n,s,i,d,u,p){var l,f,_,b,g,h,$,y=o&&o.__k||Ct,L=e.length;for(d=he(r,e,y,d,L),l=0;l<L;l++)(_=r.__k[l])!=null&&(f=_.__i==-1?z:y[_.__i]||z,_.__i=l,h=ct(t,_,f,a,n,s,i,d,u,p),b=_.__e,_.ref&&f.ref!=_.ref&&(f.ref&&ut(f.ref,null,_),p.push(_.ref,_.__c||b,_)),g==null&&b!=null&&(g=b),($=!!(4&_.__u))||f.__k===_.__k?d=Pt(_,d,t,$):typeof _.type=="function"&&h!==void 0?d=h:b&&(d=b.nextSibling),_.__u&=-7);return r.__e=g,d}function he(t,e,r,o,a){var n,s,i,d,u,p=r.length,l=p,f=0;for(t.__k=new Array(a),n=0;n<a;n++)(s=e[n])!=null&&typeof s!="boolean"&&typeof s!="function"?(d=n+f,(s=t.__k[n]=typeof s=="string"||typeof s=="number"||typeof s=="bigint"||s.constructor==String?J(null,s,null,null,null):X(s)?J(Z,{children:s},null,null,null):s.constructor==null&&s.__b>0?J(s.type,s.props,s.key,s.ref?s.ref:null,s.__v):s).__=t,s.__b=t.__b+1,i=null,(u=s.__i=me(s,r,d,l))!=-1&&(l--,(i=r[u])&&(i.__u|=2)),i==null||i.__v==null?(u==-1&&(a>p?f--:a<p&&f++),typeof s.type!="function"&&(s.__u|=4)):u!=d&&(u==d-1?f--:u==d+1?f++:(u>d?f--:f++,s.__u|=4))):t.__k[n]=null;if(l)for(n=0;n<p;n++)(i=r[n])!=null&&(2&i.__u)==0&&(i.__e==o&&(o=F(i)),It(i,i));return o}function Pt(t,e,r,o){var a,n;if(typeof t.type=="function"){for(a=t.__k,n=0;a&&n<a.length;n++)a[n]&&(a[n].__=t,e=Pt(a[n],e,r,o));return e}t.__e!=e&&(o&&(e&&t.type&&!e.parentNode&&(e=F(t)),r.insertBefore(t.__e,e||null)),e=t.__e);do e=e&&e.nextSibling;while(e!=null&&e.nodeType==8);return e}function me(t,e,r,o){var a,n,s,i=t.key,d=t.type,u=e[r],p=u!=null&&(2&u.__u)==0;if(u===null&&t.key==null||p&&i==u.key&&d==u.type)return r;if(o>(p?1:0)){for(a=r-1,n=r+1;a>=0||n<e.length;)if((u=e[s=a>=0?a--:n++])!=null&&(2&u.__u)==0&&i==u.key&&d==u.type)return s}return-1}function $t(t,e,r){e[0]=="-"?t.setProperty(e,r??""):t[e]=r==null?"":typeof r!="number"||fe.test(e)?r:r+"px"}function V(t,e,r,o,a){var n,s;t:if(e=="style")if(typeof r=="string")t.style.cssText=r;else{if(typeof o=="string"&&(t.style.cssText=o=""),o)for(e in o)r&&e in r||$t(t.style,e,"");if(r)for(e in r)o&&r[e]==o[e]||$t(t.style,e,r[e])}else if(e[0]=="o"&&e[1]=="n")n=e!=(e=e.replace(kt,"$1")),s=e.toLowerCase(),e=s in t||e=="onFocusOut"||e=="onFocusIn"?s.slice(2):e.slice(2),t.l||(t.l={}),t.l[e+n]=r,r?o?r.u=o.u:(r.u=st,t.addEventListener(e,n?at:ot,n)):t.removeEventListener(e,n?at:ot,n);else{if(a=="http://www.w3.org/2000/svg")e=e.replace(/xlink(H|:h)/,"h").replace(/sName$/,"s");else if(e!="width"&&e!="height"&&e!="href"&&e!="list"&&e!="form"&&e!="tabIndex"&&e!="download"&&e!="rowSpan"&&e!="colSpan"&&e!="role"&&e!="popover"&&e in t)try{t[e]=r??"";break t}catch{}typeof r=="function"||(r==null||r===!1&&e[4]!="-"?t.removeAttribute(e):t.setAttribute(e,e=="popover"&&r==1?"":r))}}function gt(t){return function(e){if(this.l){var r=this.l[e.type+t];if(e.t==null)e.t=st++;else if(e.t<r.u)return;return r(w.event?w.event(e):e)}}}function ct(t,e,r,o,a,n,s,i,d,u){var p,l,f,_,b,g,h,$,y,L,N,A,H,v,R,j,rt,O=e.type;if(e.constructor!=null)return null;128&r.__u&&(d=!!(32&r.__u),n=[i=e.__e=r.__e]),(p=w.__b)&&p(e);t:if(typeof O=="function")try{if($=e.props,y="prototype"in O&&O.prototype.render,L=(p=O.contextType)&&o[p.__c],N=p?L?L.props.value:p.__:o,r.__c?h=(l=e.__c=r.__c).__=l.__E:(y?e.__c=l=new O($,N):(e.__c=l=new Q($,N),l.constructor=O,l.render=$e),L&&L.sub(l),l.props=$,l.state||(l.state={}),l.context=N,l.__n=o,f=l.__d=!0,l.__h=[],l._sb=[]),y&&l.__s==null&&(l.__s=l.state),y&&O.getDerivedStateFromProps!=null&&(l.__s==l.state&&(l.__s=D({},l.__s)),D(l.__s,O.getDerivedStateFromProps($,l.__s))),_=l.props,b=l.state,l.__v=e,f)y&&O.getDerivedStateFromProps==null&&l.componentWillMount!=null&&l.componentWillMount(),y&&l.componentDidMount!=null&&l.__h.push(l.componentDidMount);else{if(y&&O.getDerivedStateFromProps==null&&$!==_&&l.componentWillReceiveProps!=null&&l.componentWillReceiveProps($,N),!l.__e&&l.shouldComponentUpdate!=null&&l.shouldComponentUpdate($,l.__s,N)===!1||e.__v==r.__v){for(e.__v!=r.__v&&(l.props=$,l.state=l.__s,l.__d=!1),e.__e=r.__e,e.__k=r.__k,e.__k.some(function(U){U&&(U.__=e)}),A=0;A<l._sb.length;A++)l.__h.push(l._sb[A]);l._sb=[],l.__h.length&&s.push(l);break t}l.componentWillUpdate!=null&&l.componentWillUpdate($,l.__s,N),y&&l.componentDidUpdate!=null&&l.__h.push(function(){l.componentDidUpdate(_,b,g)})}if(l.context=N,l.props=$,l.__P=t,l.__e=!1,H=w.__r,v=0,y){for(l.state=l.__s,l.__d=!1,H&&H(e),p=l.render(l.props,l.state,l.context),R=0;R<l._sb.length;R++)l.__h.push(l._sb[R]);l._sb=[]}else do l.__d=!1,H&&H(e),p=l.render(l.props,l.state,l.context),l.state=l.__s;while(l.__d&&++v<25);l.state=l.__s,l.getChildContext!=null&&(o=D(D({},o),l.getChildContext())),y&&!f&&l.getSnapshotBeforeUpdate!=null&&(g=l.getSnapshotBeforeUpdate(_,b)),j=p,p!=null&&p.type===Z&&p.key==null&&(j=Tt(p.props.children)),i=Et(t,X(j)?j:[j],e,r,o,a,n,s,i,d,u),l.base=e.__e,e.__u&=-161,l.__h.length&&s.push(l),h&&(l.__E=l.__=null)}catch(U){if(e.__v=null,d||n!=null)if(U.then){for(e.__u|=d?160:128;i&&i.nodeType==8&&i.nextSibling;)i=i.nextSibling;n[n.indexOf(i)]=null,e.__e=i}else{for(rt=n.length;rt--;)lt(n[rt]);nt(e)}else e.__e=r.__e,e.__k=r.__k,U.then||nt(e);w.__e(U,e,r)}else n==null&&e.__v==r.__v?(e.__k=r.__k,e.__e=r.__e):i=e.__e=be(r.__e,e,r,o,a,n,s,d,u);return(p=w.diffed)&&p(e),128&e.__u?void 0:i}function nt(t){t&&t.__c&&(t.__c.__e=!0),t&&t.__k&&t.__k.forEach(nt)}function St(t,e,r){for(var o=0;o<r.length;o++)ut(r[o],r[++o],r[++o]);w.__c&&w.__c(e,t),t.some(function(a){try{t=a.__h,a.__h=[],t.some(function(n){n.call(a)})}catch(n){w.__e(n,a.__v)}})}function Tt(t){return typeof t!="object"||t==null||t.__b&&t.__b>0?t:X(t)?t.map(Tt):D({},t)}function be(t,e,r,o,a,n,s,i,d){var u,p,l,f,_,b,g,h=r.props,$=e.props,y=e.type;if(y=="svg"?a="http://www.w3.org/2000/svg":y=="math"?a="http://www.w3.org/1998/Math/MathML":a||(a="http://www.w3.org/1999/xhtml"),n!=null){for(u=0;u<n.length;u++)if((_=n[u])&&"setAttribute"in _==!!y&&(y?_.localName==y:_.nodeType==3)){t=_,n[u]=null;break}}if(t==null){if(y==null)return document.createTextNode($);t=document.createElementNS(a,y,$.is&&$),i&&(w.__m&&w.__m(e,n),i=!1),n=null}if(y==null)h===$||i&&t.data==$||(t.data=$);else{if(n=n&&Y.call(t.childNodes),h=r.props||z,!i&&n!=null)for(h={},u=0;u<t.attributes.length;u++)h[(_=t.attributes[u]).name]=_.value;for(u in h)if(_=h[u],u!="children"){if(u=="dangerouslySetInnerHTML")l=_;else if(!(u in $)){if(u=="value"&&"defaultValue"in $||u=="checked"&&"defaultChecked"in $)continue;V(t,u,null,_,a)}}for(u in $)_=$[u],u=="children"?f=_:u=="dangerouslySetInnerHTML"?p=_:u=="value"?b=_:u=="checked"?g=_:i&&typeof _!="function"||h[u]===_||V(t,u,_,h[u],a);if(p)i||l&&(p.__html==l.__html||p.__html==t.innerHTML)||(t.innerHTML=p.__html),e.__k=[];else if(l&&(t.innerHTML=""),Et(e.type=="template"?t.content:t,X(f)?f:[f],e,r,o,y=="foreignObject"?"http://www.w3.org/1999/xhtml":a,n,s,n?n[0]:r.__k&&F(r,0),i,d),n!=null)for(u=n.length;u--;)lt(n[u]);i||(u="value",y=="progress"&&b==null?t.removeAttribute("value"):b!=null&&(b!==t[u]||y=="progress"&&!b||y=="option"&&b!=h[u])&&V(t,u,b,h[u],a),u="checked",g!=null&&g!=t[u]&&V(t,u,g,h[u],a))}return t}function ut(t,e,r){try{if(typeof t=="function"){var o=typeof t.__u=="function";o&&t.__u(),o&&e==null||(t.__u=t(e))}else t.current=e}catch(a){w.__e(a,r)}}function It(t,e,r){var o,a;if(w.unmount&&w.unmount(t),(o=t.ref)&&(o.current&&o.current!=t.__e||ut(o,null,e)),(o=t.__c)!=null){if(o.componentWillUnmount)try{o.componentWillUnmount()}catch(n){w.__e(n,e)}o.base=o.__P=null}if(o=t.__k)for(a=0;a<o.length;a++)o[a]&&It(o[a],e,r||typeof t.type!="function");r||lt(t.__e),t.__c=t.__=t.__e=void 0}function $e(t,e,r){return this.constructor(t,r)}function Lt(t,e,r){var o,a,n,s;e==document&&(e=document.documentElement),w.__&&w.__(t,e),a=(o=typeof r=="function")?null:r&&r.__k||e.__k,n=[],s=[],ct(e,t=(!o&&r||e).__k=it(Z,null,[t]),a||z,z,e.namespaceURI,!o&&r?[r]:a?null:e.firstChild?Y.call(e.childNodes):null,n,!o&&r?r:a?a.__e:e.firstChild,o,s),St(n,t,s)}Y=Ct.slice,w={__e:function(t,e,r,o){for(var a,n,s;e=e.__;)if((a=e.__c)&&!a.__)try{if((n=a.constructor)&&n.getDerivedStateFromError!=null&&(a.setState(n.getDerivedStateFromError(t)),s=a.__d),a.componentDidCatch!=null&&(a.componentDidCatch(t,o||{}),s=a.__d),s)return a.__E=a}catch(i){t=i}throw t}},vt=0,pe=function(t){return t!=null&&t.constructor==null},Q.prototype.setState=function(t,e){var r;r=this.__s!=null&&this.__s!=this.state?this.__s:this.__s=D({},this.state),typeof t=="function"&&(t=t(D({},r),this.props)),t&&D(r,t),t!=null&&this.__v&&(e&&this._sb.push(e),bt(this))},Q.prototype.forceUpdate=function(t){this.__v&&(this.__e=!0,t&&this.__h.push(t),bt(this))},Q.prototype.render=Z,q=[],yt=typeof Promise=="function"?Promise.prototype.then.bind(Promise.resolve()):setTimeout,wt=function(t,e){return t.__v.__b-e.__v.__b},K.__r=0,kt=/(PointerCapture)$|Capture$/i,st=0,ot=gt(!1),at=gt(!0),_e=0;var W,C,dt,Nt,B=0,Ut=[],x=w,Rt=x.__b,At=x.__r,Ot=x.diffed,Dt=x.__c,Mt=x.unmount,Ht=x.__;function _t(t,e){x.__h&&x.__h(C,t,B||e),B=0;var r=C.__H||(C.__H={__:[],__h:[]});return t>=r.__.length&&r.__.push({}),r.__[t]}function m(t){return B=1,ge(Bt,t)}function ge(t,e,r){var o=_t(W++,2);if(o.t=t,!o.__c&&(o.__=[r?r(e):Bt(void 0,e),function(i){var d=o.__N?o.__N[0]:o.__[0],u=o.t(d,i);d!==u&&(o.__N=[u,o.__[1]],o.__c.setState({}))}],o.__c=C,!C.__f)){var a=function(i,d,u){if(!o.__c.__H)return!0;var p=o.__c.__H.__.filter(function(f){return!!f.__c});if(p.every(function(f){return!f.__N}))return!n||n.call(this,i,d,u);var l=o.__c.props!==i;return p.forEach(function(f){if(f.__N){var _=f.__[0];f.__=f.__N,f.__N=void 0,_!==f.__[0]&&(l=!0)}}),n&&n.call(this,i,d,u)||l};C.__f=!0;var n=C.shouldComponentUpdate,s=C.componentWillUpdate;C.componentWillUpdate=function(i,d,u){if(this.__e){var p=n;n=void 0,a(i,d,u),n=p}s&&s.call(this,i,d,u)},C.shouldComponentUpdate=a}return o.__N||o.__}function G(t,e){var r=_t(W++,3);!x.__s&&Wt(r.__H,e)&&(r.__=t,r.u=e,C.__H.__h.push(r))}function Ft(t){return B=5,jt(function(){return{current:t}},[])}function jt(t,e){var r=_t(W++,7);return Wt(r.__H,e)&&(r.__=t(),r.__H=e,r.__h=t),r.__}function zt(t,e){return B=8,jt(function(){return t},e)}function ve(){for(var t;t=Ut.shift();)if(t.__P&&t.__H)try{t.__H.__h.forEach(tt),t.__H.__h.forEach(pt),t.__H.__h=[]}catch(e){t.__H.__h=[],x.__e(e,t.__v)}}x.__b=function(t){C=null,Rt&&Rt(t)},x.__=function(t,e){t&&e.__k&&e.__k.__m&&(t.__m=e.__k.__m),Ht&&Ht(t,e)},x.__r=function(t){At&&At(t),W=0;var e=(C=t.__c).__H;e&&(dt===C?(e.__h=[],C.__h=[],e.__.forEach(function(r){r.__N&&(r.__=r.__N),r.u=r.__N=void 0})):(e.__h.forEach(tt),e.__h.forEach(pt),e.__h=[],W=0)),dt=C},x.diffed=function(t){Ot&&Ot(t);var e=t.__c;e&&e.__H&&(e.__H.__h.length&&(Ut.push(e)!==1&&Nt===x.requestAnimationFrame||((Nt=x.requestAnimationFrame)||ye)(ve)),e.__H.__.forEach(function(r){r.u&&(r.__H=r.u),r.u=void 0})),dt=C=null},x.__c=function(t,e){e.some(function(r){try{r.__h.forEach(tt),r.__h=r.__h.filter(function(o){return!o.__||pt(o)})}catch(o){e.some(function(a){a.__h&&(a.__h=[])}),e=[],x.__e(o,r.__v)}}),Dt&&Dt(t,e)},x.unmount=function(t){Mt&&Mt(t);var e,r=t.__c;r&&r.__H&&(r.__H.__.forEach(function(o){try{tt(o)}catch(a){e=a}}),r.__H=void 0,e&&x.__e(e,r.__v))};var qt=typeof requestAnimationFrame=="function";function ye(t){var e,r=function(){clearTimeout(o),qt&&cancelAnimationFrame(e),setTimeout(t)},o=setTimeout(r,35);qt&&(e=requestAnimationFrame(r))}function tt(t){var e=C,r=t.__c;typeof r=="function"&&(t.__c=void 0,r()),C=e}function pt(t){var e=C;t.__c=t.__(),C=e}function Wt(t,e){return!t||t.length!==e.length||e.some(function(r,o){return r!==t[o]})}function Bt(t,e){return typeof e=="function"?e(t):e}var Vt=function(t,e,r,o){var a;e[0]=0;for(var n=1;n<e.length;n++){var s=e[n++],i=e[n]?(e[0]|=s?1:2,r[e[n++]]):e[++n];s===3?o[0]=i:s===4?o[1]=Object.assign(o[1]||{},i):s===5?(o[1]=o[1]||{})[e[++n]]=i:s===6?o[1][e[++n]]+=i+"":s?(a=t.apply(i,Vt(t,i,r,["",null])),o.push(a),i[0]?e[0]|=2:(e[n-2]=0,e[n]=a)):o.push(i)}return o},Gt=new Map;function Jt(t){var e=Gt.get(this);return e||(e=new Map,Gt.set(this,e)),(e=Vt(this,e.get(t)||(e.set(t,e=(function(r){for(var o,a,n=1,s="",i="",d=[0],u=function(f){n===1&&(f||(s=s.replace(/^\s*\n\s*|\s*\n\s*$/g,"")))?d.push(0,f,s):n===3&&(f||s)?(d.push(3,f,s),n=2):n===2&&s==="..."&&f?d.push(4,f,0):n===2&&s&&!f?d.push(5,0,!0,s):n>=5&&((s||!f&&n===5)&&(d.push(n,0,s,a),n=6),f&&(d.push(n,f,0,a),n=6)),s=""},p=0;p<r.length;p++){p&&(n===1&&u(),u(p));for(var l=0;l<r[p].length;l++)o=r[p][l],n===1?o==="<"?(u(),d=[d],n=3):s+=o:n===4?s==="--"&&o===">"?(n=1,s=""):s=o+s[0]:i?o===i?i="":s+=o:o==='"'||o==="'"?i=o:o===">"?(u(),n=1):n&&(o==="="?(n=5,a=s,s=""):o==="/"&&(n<5||r[p][l+1]===">")?(u(),n===3&&(d=d[0]),n=d,(d=d[0]).push(2,0,n),n=0):o===" "||o==="	"||o===`
`||o==="\r"?(u(),n=2):s+=o),n===3&&s==="!--"&&(n=4,d=d[0])}return u(),d})(t)),e),arguments,[])).length>1?e:e[0]}var c=Jt.bind(it),we=5e3;async function E(t,e,r){let o={method:t,headers:{}};t!=="GET"&&(o.headers["X-Strata-Console"]="1"),r!==void 0&&(o.headers["Content-Type"]="application/json",o.body=JSON.stringify(r));let a=await fetch("/api/v1"+e,o);if(a.status===204)return null;let n=null;try{n=await a.json()}catch{}if(!a.ok){let s=n&&n.error?n.error:a.status+" "+a.statusText,i=new Error(s);throw i.code=n&&n.code,i}return n}function P(t,e=!0){let[r,o]=m({data:null,error:null}),a=zt(()=>{t&&E("GET",t).then(n=>o({data:n,error:null}),n=>o(s=>({data:s.data,error:n})))},[t]);return G(()=>{if(o({data:null,error:null}),a(),!e)return;let n=setInterval(a,we);return()=>clearInterval(n)},[a,e]),[r.data,r.error,a]}function Qt(){let[t,e]=m(location.hash);return G(()=>{let r=()=>e(location.hash);return addEventListener("hashchange",r),()=>removeEventListener("hashchange",r)},[]),(t.replace(/^#/,"")||"/").split("/").filter(Boolean).map(decodeURIComponent)}var k=encodeURIComponent;function I({error:t}){return t?c`<p class="error" role="alert">${t.message}${t.code?c` <code>${t.code}</code>`:""}</p>`:null}function S({data:t,error:e}){return t?null:e?c`<${I} error=${e} />`:c`<p class="muted">Loading…</p>`}function T({label:t,value:e,warn:r,href:o}){let a="stat"+(r?" warn":""),n=c`<span class="stat-value">${e}</span><span class="stat-label">${t}</span>`;return o?c`<a class=${a+" stat-link"} href=${o}>${n}</a>`:c`<div class=${a}>${n}</div>`}function et(t,e){let r=[];for(let o of t.split(`
`)){if(!o.trim())continue;let a=o.indexOf(e);if(a<1)throw new Error(`"${o}" is not key${e}value`);r.push([o.slice(0,a).trim(),o.slice(a+1).trim()])}return r}var Yt=[{state:"under-replicated",field:"underReplicatedPartitions",label:"Under-replicated"},{state:"offline",field:"offlinePartitions",label:"Offline"},{state:"non-preferred-leader",field:"nonPreferredLeaderPartitions",label:"Not on preferred leader"}];function Xt(t){return t<0?"—":t<1e3?"now":t<12e4?Math.round(t/1e3)+" s ago":Math.round(t/6e4)+" min ago"}function ke({status:t}){return c`<span class=${"badge status-"+t}>${t}</span>`}function Zt({label:t,page:e,pageSize:r,total:o,setPage:a,noun:n}){let s=Math.max(1,Math.ceil(o/r));return c`<nav class="pager" aria-label=${t}>
    <button type="button" disabled=${e<=1} onClick=${()=>a(e-1)}>Previous</button>
    <span>Page ${e} of ${s} · ${o} ${n}</span>
    <button type="button" disabled=${e>=s} onClick=${()=>a(e+1)}>Next</button>
  </nav>`}function Kt({id:t,members:e,leaderId:r,caption:o}){return e.length===0?c`<p class="muted">No ${o.toLowerCase()}.</p>`:c`<div class="scroll"><table id=${t} aria-label=${o}>
    <thead><tr><th>Node</th><th>Raft role</th><th>Log end</th><th>Lag (entries)</th><th>Last heard</th></tr></thead>
    <tbody>${e.map(a=>c`<tr key=${a.nodeId} class=${a.lastContactMs>5e3||a.lastContactMs<0?"warn":""}>
      <td>${a.nodeId}</td><td>${a.nodeId===r?"leader":t==="quorum-voters"?"follower":"observer"}</td>
      <td>${a.logEndOffset<0?"—":a.logEndOffset}</td><td>${a.lag<0?"—":a.lag}</td><td>${Xt(a.lastContactMs)}</td></tr>`)}</tbody>
  </table></div>`}function te(){let[t,e]=P("/cluster"),r=t?t.nodes.filter(o=>o.status==="alive").length:0;return c`<section>
    <h1>Cluster</h1>
    <${S} data=${t} error=${e} />
    ${t&&c`
      <p class="muted">Cluster id <code>${t.clusterId}</code> · served by node ${t.node}</p>
      ${e&&c`<${I} error=${e} />`}
      <div class="stats">
        <${T} label="Nodes alive" value=${r+" / "+t.nodes.length} warn=${r<t.nodes.length} />
        <${T} label="Controller" value=${t.controller<0?"none":t.controller} warn=${t.controller<0} />
        <${T} label="Raft epoch" value=${t.quorum.leaderEpoch<0?"—":t.quorum.leaderEpoch} />
        <${T} label="Topics" value=${t.topics} href="#/topics" />
        <${T} label="Partitions" value=${t.partitions} />
        ${Yt.map(o=>c`<${T} key=${o.state} label=${o.label} value=${t[o.field]} warn=${t[o.field]>0}
          href=${"#/cluster/partitions/"+o.state} />`)}
      </div>
      <h2>Nodes</h2>
      <div class="scroll"><table id="cluster-nodes">
        <thead><tr><th>Node</th><th>Address</th><th>Rack</th><th>Roles</th><th>Status</th><th>Last heard</th></tr></thead>
        <tbody>${t.nodes.map(o=>c`<tr key=${o.nodeId} class=${o.status==="alive"?"":"warn"}>
          <td>${o.nodeId}${o.nodeId===t.node?c` <span class="badge">this console</span>`:""}</td>
          <td>${o.port<0?"—":o.host+":"+o.port}</td><td>${o.rack||"—"}</td>
          <td>${o.roles.join(", ")}${o.activeController?c` <span class="badge">active controller</span>`:""}</td>
          <td><${ke} status=${o.status} /></td><td>${Xt(o.lastContactMs)}</td></tr>`)}</tbody>
      </table></div>
      <h2>Metadata quorum</h2>
      ${t.quorum.error?c`<p class="error" role="alert">The quorum could not be described: ${t.quorum.error}</p>`:c`<p class="muted" id="quorum-summary">Raft leader node ${t.quorum.leaderId} in epoch ${t.quorum.leaderEpoch};
            committed up to entry ${t.quorum.highWatermark}; controllers (voters) ${t.controllers.join(", ")}.</p>
          <${Kt} id="quorum-voters" members=${t.quorum.voters} leaderId=${t.quorum.leaderId} caption="Voters" />
          <h3>Observers</h3>
          <${Kt} id="quorum-observers" members=${t.quorum.observers} leaderId=${t.quorum.leaderId} caption="Observers" />`}
      <p class="muted">Partition counts from metadata ${Math.round(t.metadataAgeMs/100)/10} s old.</p>`}
  </section>`}function ee({state:t}){let[e,r]=m(1),o=50,a=Yt.find(i=>i.state===t),[n,s]=P(`/cluster/partitions?state=${k(t)}&page=${e}&pageSize=${o}`);return c`<section>
    <p class="crumbs"><a href="#/">Cluster</a> /</p>
    <h1>${a?a.label:t} partitions</h1>
    <${S} data=${n} error=${s} />
    ${n&&c`
      <div class="scroll"><table id="problem-partitions">
        <thead><tr><th>Topic</th><th>Partition</th><th>Leader</th><th>Replicas</th><th>ISR</th><th>Offline replicas</th></tr></thead>
        <tbody>${n.partitions.map(i=>c`<tr key=${i.topic+"/"+i.partition}>
          <td><a href=${"#/topics/"+k(i.topic)}>${i.topic}</a></td><td>${i.partition}</td><td>${i.leader<0?"none":i.leader}</td>
          <td>${i.replicas.join(", ")}</td><td>${i.isr.join(", ")}</td><td>${i.offlineReplicas.join(", ")||"—"}</td></tr>`)}</tbody>
      </table></div>
      ${n.total===0&&c`<p class="ok" role="status">None.</p>`}
      <${Zt} label="Partition pages" page=${e} pageSize=${o} total=${n.total} setPage=${r} noun="partitions" />`}
  </section>`}var Ce=/^[a-zA-Z0-9._-]{1,249}$/;function xe({onCreated:t}){let[e,r]=m(""),[o,a]=m("1"),[n,s]=m("1"),[i,d]=m(""),[u,p]=m(null),[l,f]=m(!1);return c`<form class="card" onSubmit=${async b=>{b.preventDefault(),p(null);try{if(!Ce.test(e)||e==="."||e==="..")throw new Error('Topic names use 1 to 249 of: letters, digits, ".", "_", "-".');let g=Number(o),h=Number(n);if(!Number.isInteger(g)||g<1)throw new Error("Partitions must be a whole number of at least 1.");if(!Number.isInteger(h)||h<1)throw new Error("Replication factor must be a whole number of at least 1.");let $=Object.fromEntries(et(i,"="));f(!0),await E("POST","/topics",{name:e,partitions:g,replicationFactor:h,configs:$}),r(""),t(e)}catch(g){p(g)}finally{f(!1)}}} aria-labelledby="create-topic">
    <h2 id="create-topic">Create a topic</h2>
    <div class="fields">
      <label>Name<input id="new-topic-name" value=${e} onInput=${b=>r(b.target.value)} required /></label>
      <label>Partitions<input id="new-topic-partitions" type="number" min="1" value=${o} onInput=${b=>a(b.target.value)} /></label>
      <label>Replication factor<input id="new-topic-rf" type="number" min="1" value=${n} onInput=${b=>s(b.target.value)} /></label>
    </div>
    <label><span>Configs (one <code>name=value</code> per line)</span><textarea rows="2" value=${i} onInput=${b=>d(b.target.value)} placeholder="retention.ms=86400000"></textarea></label>
    <${I} error=${u} />
    <button id="create-topic-submit" type="submit" disabled=${l}>Create topic</button>
  </form>`}function re(){let[t,e]=m(""),[r,o]=m(1),[a,n]=m(null),s=25,[i,d,u]=P(`/topics?search=${k(t)}&page=${r}&pageSize=${s}`);return c`<section>
    <h1>Topics</h1>
    <div class="toolbar">
      <label class="search">Search<input type="search" id="topic-search" value=${t}
        onInput=${p=>{e(p.target.value),o(1)}} placeholder="name contains…" /></label>
    </div>
    <${S} data=${i} error=${d} />
    ${i&&c`
      <div class="scroll"><table>
        <thead><tr><th>Name</th><th>Partitions</th><th>Replication</th><th></th></tr></thead>
        <tbody>${i.topics.map(p=>c`<tr key=${p.name}>
          <td><a href=${"#/topics/"+k(p.name)}>${p.name}</a>${p.internal?c` <span class="badge">internal</span>`:""}</td>
          <td>${p.partitions}</td><td>${p.replicationFactor}</td>
          <td><a href=${"#/topics/"+k(p.name)+"/messages"}>Messages</a></td></tr>`)}</tbody>
      </table></div>
      ${i.topics.length===0&&c`<p class="muted">No topics${t?" match":""}.</p>`}
      <${Zt} label="Topic pages" page=${r} pageSize=${s} total=${i.total} setPage=${o} noun="topics" />`}
    ${a&&c`<p class="ok" role="status">Created <a href=${"#/topics/"+k(a)}>${a}</a>.</p>`}
    <${xe} onCreated=${p=>{n(p),u()}} />
  </section>`}var Ee=t=>t==="FAILED"?"warn":t==="PAUSED"||t==="STOPPED"?"set":"";function oe({trace:t}){if(!t)return null;let e=t.split(`
`);return c`<details class="trace"><summary>${e[0]}</summary><pre>${e.slice(1).join(`
`)}</pre></details>`}function Pe({c:t,onChanged:e}){let[r,o]=m(null),[a,n]=m(!1),s=async d=>{o(null),n(!0);try{await E("POST","/connect/"+k(t.name)+d),e()}catch(u){o(u)}finally{n(!1)}},i=t.state==="PAUSED"||t.state==="STOPPED";return c`<div class="card connector" id=${"connector-"+t.name}>
    <h2>${t.name} <span class="badge">${t.type}</span> <span class=${"state "+Ee(t.state)}>${t.state}</span></h2>
    <p class="muted"><code>${t.class||"—"}</code> · worker ${t.workerId||"—"}</p>
    <${oe} trace=${t.trace} />
    <div class="scroll"><table>
      <thead><tr><th>Task</th><th>State</th><th>Worker</th><th>Error</th><th></th></tr></thead>
      <tbody>${t.tasks.map(d=>c`<tr key=${d.id} class=${d.state==="FAILED"?"warn":""}>
        <td>${d.id}</td><td>${d.state}</td><td>${d.workerId||"—"}</td><td class="wrap"><${oe} trace=${d.trace} /></td>
        <td><button type="button" disabled=${a} onClick=${()=>s("/tasks/"+d.id+"/restart")} aria-label=${"Restart task "+d.id}>Restart</button></td></tr>`)}</tbody>
    </table></div>
    ${t.tasks.length===0&&c`<p class="muted">No tasks.</p>`}
    <${I} error=${r} />
    <button type="button" disabled=${a} onClick=${()=>s("/restart?includeTasks=true")}>Restart with tasks</button>
    ${i?c`<button type="button" disabled=${a} onClick=${()=>s("/resume")}>Resume</button>`:c`<button type="button" disabled=${a} onClick=${()=>s("/pause")}>Pause</button>`}
    <details><summary>Config</summary><table>${Object.keys(t.config).sort().map(d=>c`<tr key=${d}><td>${d}</td><td class="wrap">${t.config[d]}</td></tr>`)}</table></details>
  </div>`}function ne(){let[t,e,r]=P("/connect");return c`<section>
    <h1>Connectors</h1>
    <${S} data=${t} error=${e} />
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
      ${t.connectors.map(o=>c`<${Pe} key=${o.name} c=${o} onChanged=${r} />`)}`}
  </section>`}function ae(t,e,r,o){return!t||e[r]===null||t[r]===null||o<=0?"—":((e[r]-t[r])/o).toFixed(1)+"/s"}function se(){let[t,e]=P("/streams"),r=Ft({at:0,jobs:{},prev:{},dt:0});if(t&&t!==r.current.data){let s=Date.now(),i=Object.fromEntries(t.jobs.map(d=>[d.name,d]));r.current={data:t,at:s,jobs:i,prev:r.current.jobs,dt:r.current.at?(s-r.current.at)/1e3:0}}let{prev:o,dt:a}=r.current,n=s=>s??"—";return c`<section>
    <h1>Stream jobs</h1>
    <${S} data=${t} error=${e} />
    ${t&&c`
      <p class="muted">${t.source==="jobs-dir"?"The jobs of this node's --jobs-dir.":"Groups whose members are stream jobs (jobs with no running instance are not listed)."}
        Records, errors and restarts count this node's instances. A job cannot be restarted from here: it restarts itself after an error, or restart its process.</p>
      <div class="scroll"><table id="jobs">
        <thead><tr><th>Job</th><th>Application id</th><th>State</th><th>Members</th><th>Lag</th><th>In</th><th>Out</th><th>In rate</th><th>Out rate</th><th>Errors</th><th>Restarts</th></tr></thead>
        <tbody>${t.jobs.map(s=>c`<tr key=${s.name} class=${s.errors>0||s.error?"warn":""}>
          <td>${s.name}</td><td><a href=${"#/groups/"+k(s.applicationId)}>${s.applicationId}</a></td>
          <td>${s.error||s.state}</td><td>${s.members}</td><td class=${s.lag>0?"lag":""}>${s.lag<0?"?":s.lag}</td>
          <td>${n(s.recordsIn)}</td><td>${n(s.recordsOut)}</td>
          <td>${ae(o[s.name],s,"recordsIn",a)}</td><td>${ae(o[s.name],s,"recordsOut",a)}</td>
          <td>${n(s.errors)}</td><td>${n(s.restarts)}</td></tr>`)}</tbody>
      </table></div>
      ${t.jobs.length===0&&c`<p class="muted">No stream jobs.</p>`}`}
  </section>`}var le=["ALL","READ","WRITE","CREATE","DELETE","ALTER","DESCRIBE","CLUSTER_ACTION","DESCRIBE_CONFIGS","ALTER_CONFIGS","IDEMPOTENT_WRITE"],ie=["TOPIC","GROUP","CLUSTER","TRANSACTIONAL_ID"],Se=["producer_byte_rate","consumer_byte_rate","request_percentage","controller_mutation_rate","connection_creation_rate"];function ft(t){let[e,r]=m(null),[o,a]=m(!1);return[async s=>{r(null),a(!0);try{return await s(),t(),!0}catch(i){return r(i),!1}finally{a(!1)}},e,o]}var M=(t,e)=>c`${e&&c`<option value="">any</option>`}${t.map(r=>c`<option value=${r}>${r}</option>`)}`;function Te(){let[t,e]=m({principal:"",resourceType:"",operation:""}),r=Object.entries(t).filter(([,_])=>_).map(([_,b])=>_+"="+k(b)).join("&"),[o,a,n]=P("/acls"+(r?"?"+r:"")),[s,i]=m({principal:"User:",host:"*",resourceType:"TOPIC",resourceName:"",patternType:"LITERAL",operation:"READ",permission:"ALLOW"}),[d,u,p]=ft(n),l=(_,b,g)=>h=>b({..._,[g]:h.target.value}),f=_=>{_.preventDefault(),d(()=>E("POST","/acls",s))};return c`
    <div class="toolbar">
      <label>Principal<input id="acl-filter-principal" value=${t.principal} onInput=${l(t,e,"principal")} placeholder="User:alice" /></label>
      <label>Resource<select value=${t.resourceType} onChange=${l(t,e,"resourceType")}>${M(ie,!0)}</select></label>
      <label>Operation<select value=${t.operation} onChange=${l(t,e,"operation")}>${M(le,!0)}</select></label>
    </div>
    <${S} data=${o} error=${a} />
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
        <label>Resource<select id="acl-resource-type" value=${s.resourceType} onChange=${l(s,i,"resourceType")}>${M(ie)}</select></label>
        <label>Name<input id="acl-resource-name" value=${s.resourceName} onInput=${l(s,i,"resourceName")} disabled=${s.resourceType==="CLUSTER"} /></label>
        <label>Pattern<select value=${s.patternType} onChange=${l(s,i,"patternType")}>${M(["LITERAL","PREFIXED"])}</select></label>
        <label>Operation<select id="acl-operation" value=${s.operation} onChange=${l(s,i,"operation")}>${M(le)}</select></label>
        <label>Permission<select value=${s.permission} onChange=${l(s,i,"permission")}>${M(["ALLOW","DENY"])}</select></label>
      </div>
      <${I} error=${u} />
      <button id="acl-submit" type="submit" disabled=${p}>Add ACL</button>
    </form>`}function Ie(){let[t,e,r]=P("/users"),[o,a]=m(""),[n,s]=m(""),[i,d]=m("SCRAM-SHA-512"),[u,p]=m("8192"),[l,f,_]=ft(r),b=async g=>{g.preventDefault(),await l(()=>E("POST","/users",{user:o,password:n,mechanism:i,iterations:Number(u)}))&&(a(""),s(""))};return c`
    <${S} data=${t} error=${e} />
    ${t&&c`
      <div class="scroll"><table id="users">
        <thead><tr><th>User</th><th>Credentials</th><th></th></tr></thead>
        <tbody>${t.users.map(g=>c`<tr key=${g.user}>
          <td>${g.user}</td><td>${g.credentials.map(h=>c`<div>${h.mechanism} · ${h.iterations} iterations</div>`)}</td>
          <td><button type="button" class="danger" disabled=${_} onClick=${()=>l(()=>E("DELETE","/users/"+k(g.user)))}>Remove</button></td></tr>`)}</tbody>
      </table></div>
      ${t.users.length===0&&c`<p class="muted">No SCRAM users.</p>`}`}
    <form class="card" onSubmit=${b} aria-labelledby="add-user">
      <h2 id="add-user">Add a user or change a password</h2>
      <div class="fields">
        <label>User<input id="user-name" value=${o} onInput=${g=>a(g.target.value)} required autocomplete="off" /></label>
        <label>Password<input id="user-password" type="password" value=${n} onInput=${g=>s(g.target.value)} required autocomplete="new-password" /></label>
        <label>Mechanism<select value=${i} onChange=${g=>d(g.target.value)}>${M(["SCRAM-SHA-256","SCRAM-SHA-512"])}</select></label>
        <label>Iterations<input type="number" min="4096" max="16384" value=${u} onInput=${g=>p(g.target.value)} /></label>
      </div>
      <${I} error=${f} />
      <button id="user-submit" type="submit" disabled=${_}>Save user</button>
    </form>`}var ce=t=>t.map(e=>`${e.type}=${e.name===null?"<default>":e.name}`).join(", ");function Le(){let[t,e,r]=P("/quotas"),[o,a]=m({type:"user",name:"",key:"producer_byte_rate",value:"1048576"}),[n,s,i]=ft(r),d=p=>l=>a({...o,[p]:l.target.value}),u=p=>{p.preventDefault();let l=[{type:o.type,name:o.name===""?null:o.name}];n(()=>E("PUT","/quotas",{entity:l,values:{[o.key]:Number(o.value)}}))};return c`
    <${S} data=${t} error=${e} />
    ${t&&c`
      <div class="scroll"><table id="quotas">
        <thead><tr><th>Entity</th><th>Quota</th><th>Value</th><th></th></tr></thead>
        <tbody>${t.quotas.flatMap(p=>Object.keys(p.values).sort().map(l=>c`<tr key=${ce(p.entity)+l}>
          <td>${ce(p.entity)}</td><td>${l}</td><td>${p.values[l]}</td>
          <td><button type="button" class="danger" disabled=${i} onClick=${()=>n(()=>E("DELETE","/quotas",{entity:p.entity,keys:[l]}))}>Remove</button></td></tr>`))}</tbody>
      </table></div>
      ${t.quotas.length===0&&c`<p class="muted">No client quotas.</p>`}`}
    <form class="card" onSubmit=${u} aria-labelledby="set-quota">
      <h2 id="set-quota">Set a quota</h2>
      <div class="fields">
        <label>Entity<select value=${o.type} onChange=${d("type")}>${M(["user","client-id","ip"])}</select></label>
        <label>Name (empty: the default)<input id="quota-name" value=${o.name} onInput=${d("name")} /></label>
        <label>Quota<select value=${o.key} onChange=${d("key")}>${M(Se)}</select></label>
        <label>Value<input id="quota-value" type="number" min="0" step="any" value=${o.value} onInput=${d("value")} /></label>
      </div>
      <${I} error=${s} />
      <button id="quota-submit" type="submit" disabled=${i}>Set quota</button>
    </form>`}function ue({tab:t}){let e=[["acls","ACLs",Te],["users","SCRAM users",Ie],["quotas","Quotas",Le]],r=e.find(a=>a[0]===t)||e[0],o=r[2];return c`<section>
    <h1>Security</h1>
    <nav class="tabs" aria-label="Security">${e.map(([a,n])=>c`<a href=${"#/security/"+a} aria-current=${a===r[0]?"page":void 0}>${n}</a>`)}</nav>
    <${o} />
  </section>`}function de({what:t,name:e,onDelete:r}){let[o,a]=m(!1),[n,s]=m(""),[i,d]=m(null);return o?c`<form class="card danger-zone" onSubmit=${async p=>{p.preventDefault();try{await r()}catch(l){d(l)}}}>
    <label><span>Type <code>${e}</code> to delete this ${t}</span><input value=${n} onInput=${p=>s(p.target.value)} /></label>
    <${I} error=${i} />
    <button type="submit" class="danger" disabled=${n!==e}>Delete ${t} ${e}</button>
    <button type="button" onClick=${()=>a(!1)}>Cancel</button>
  </form>`:c`<button type="button" class="danger" onClick=${()=>a(!0)}>Delete ${t}…</button>`}function Ne({name:t}){let[e,r]=P("/topics/"+k(t)),o=async()=>{await E("DELETE","/topics/"+k(t)),location.hash="#/topics"};return c`<section>
    <p class="crumbs"><a href="#/topics">Topics</a> /</p>
    <h1>${t}</h1>
    <${S} data=${e} error=${r} />
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
      ${!e.internal&&c`<${de} what="topic" name=${t} onDelete=${o} />`}`}
  </section>`}function Re(t){return t.encoding==="base64"?Uint8Array.from(atob(t.data),e=>e.charCodeAt(0)):new TextEncoder().encode(t.data)}function ht(t,e){return t==null?c`<span class="muted">null</span>`:e==="hex"?[...Re(t)].map(r=>r.toString(16).padStart(2,"0")).join(" "):t.encoding==="base64"?c`<span class="badge">base64</span> ${t.data}`:e==="json"&&t.json?c`<pre>${JSON.stringify(JSON.parse(t.data),null,2)}</pre>`:t.data}function Ae({topic:t,partitions:e,onProduced:r}){let[o,a]=m(""),[n,s]=m(""),[i,d]=m(""),[u,p]=m(""),[l,f]=m(null),[_,b]=m(null);return c`<form class="card" onSubmit=${async h=>{h.preventDefault(),b(null),f(null);try{let $={key:n===""?null:{data:n},value:{data:i},headers:et(u,":").map(([L,N])=>({key:L,value:{data:N}}))};o!==""&&($.partition=Number(o));let y=await E("POST","/topics/"+k(t)+"/records",$);f(y),r(y)}catch($){b($)}}} aria-labelledby="produce">
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
    <${I} error=${_} />
    ${l&&c`<p class="ok" role="status" id="produce-result">Produced to partition ${l.partition} at offset ${l.offset}.</p>`}
    <button id="produce-submit" type="submit">Produce</button>
  </form>`}function Oe({topic:t}){let[e]=P("/topics/"+k(t),!1),[r,o]=m("0"),[a,n]=m("start"),[s,i]=m("0"),[d,u]=m(""),[p,l]=m("50"),[f,_]=m("text"),[b,g]=m(null),[h,$]=m(null),[y,L]=m(null),N=()=>{let v=`?partition=${r}&limit=${p}`;return a==="offset"&&(v+="&offset="+k(s)),a==="time"&&(v+="&timestamp="+(d?new Date(d).getTime():0)),a==="end"&&(v+="&fromEnd=true"),v},A=v=>{g(v),E("GET","/topics/"+k(t)+"/records"+v).then(R=>{$(R),L(null)},L)};G(()=>{A(N())},[t]);let H=h&&h.nextOffset<h.highWatermark;return c`<section>
    <p class="crumbs"><a href="#/topics">Topics</a> / <a href=${"#/topics/"+k(t)}>${t}</a> /</p>
    <h1>Messages</h1>
    <form class="card" onSubmit=${v=>{v.preventDefault(),A(N())}}>
      <div class="fields">
        <label>Partition<select id="browse-partition" value=${r} onChange=${v=>o(v.target.value)}>
          ${Array.from({length:e?e.partitions.length:1},(v,R)=>c`<option value=${R}>${R}</option>`)}
        </select></label>
        <label>From<select id="browse-from" value=${a} onChange=${v=>n(v.target.value)}>
          <option value="start">the log start</option><option value="offset">an offset</option>
          <option value="time">a time</option><option value="end">the end</option>
        </select></label>
        ${a==="offset"&&c`<label>Offset<input type="number" min="0" value=${s} onInput=${v=>i(v.target.value)} /></label>`}
        ${a==="time"&&c`<label>Time<input type="datetime-local" value=${d} onInput=${v=>u(v.target.value)} /></label>`}
        <label>Limit<input type="number" min="1" max="500" value=${p} onInput=${v=>l(v.target.value)} /></label>
        <label>Decode as<select id="browse-decode" value=${f} onChange=${v=>_(v.target.value)}>
          <option value="text">text</option><option value="json">JSON (pretty)</option><option value="hex">hex</option>
        </select></label>
      </div>
      <button type="submit" id="browse-submit">Load</button>
      ${b&&c` <button type="button" onClick=${()=>A(b)}>Refresh</button>`}
    </form>
    <${I} error=${y} />
    ${h&&c`
      <p class="muted">Partition ${h.partition}: offsets ${h.logStartOffset} to ${h.highWatermark-1}; showing ${h.records.length} from ${h.startOffset}.</p>
      <div class="scroll"><table class="records">
        <thead><tr><th>Offset</th><th>Timestamp</th><th>Key</th><th>Value</th><th>Headers</th></tr></thead>
        <tbody>${h.records.map(v=>c`<tr key=${v.offset}>
          <td>${v.offset}</td><td>${new Date(v.timestamp).toISOString()}</td>
          <td class="wrap">${ht(v.key,f)}</td><td class="wrap value">${ht(v.value,f)}</td>
          <td class="wrap">${v.headers.map(R=>c`<div><b>${R.key}</b>: ${ht(R.value,f)}</div>`)}</td></tr>`)}</tbody>
      </table></div>
      ${h.records.length===0&&c`<p class="muted">No records there.</p>`}
      ${H&&c`<button type="button" onClick=${()=>A(`?partition=${h.partition}&limit=${p}&offset=${h.nextOffset}`)}>Next records</button>`}`}
    ${e&&c`<${Ae} topic=${t} partitions=${e.partitions.length} onProduced=${()=>b&&A(b)} />`}
  </section>`}function De(){let[t,e]=P("/groups");return c`<section>
    <h1>Consumer groups</h1>
    <${S} data=${t} error=${e} />
    ${t&&c`
      <div class="scroll"><table>
        <thead><tr><th>Group</th><th>State</th><th>Protocol</th><th>Coordinator</th></tr></thead>
        <tbody>${t.groups.map(r=>c`<tr key=${r.group}>
          <td><a href=${"#/groups/"+k(r.group)}>${r.group}</a></td><td>${r.state}</td><td>${r.protocolType||"—"}</td><td>${r.coordinator}</td></tr>`)}</tbody>
      </table></div>
      ${t.groups.length===0&&c`<p class="muted">No groups.</p>`}`}
  </section>`}function Me({name:t}){let[e,r]=P("/groups/"+k(t)),o=async()=>{await E("DELETE","/groups/"+k(t)),location.hash="#/groups"};return c`<section>
    <p class="crumbs"><a href="#/groups">Consumer groups</a> /</p>
    <h1>${t}</h1>
    <${S} data=${e} error=${r} />
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
      <${de} what="group" name=${t} onDelete=${o} />`}
  </section>`}function He(){let t=Qt(),e,r="cluster";t[0]==="topics"&&t[1]&&t[2]==="messages"?(e=c`<${Oe} topic=${t[1]} />`,r="topics"):t[0]==="topics"&&t[1]?(e=c`<${Ne} name=${t[1]} />`,r="topics"):t[0]==="cluster"&&t[1]==="partitions"&&t[2]?e=c`<${ee} state=${t[2]} />`:t[0]==="topics"?(e=c`<${re} />`,r="topics"):t[0]==="groups"&&t[1]?(e=c`<${Me} name=${t[1]} />`,r="groups"):t[0]==="groups"?(e=c`<${De} />`,r="groups"):t[0]==="connect"?(e=c`<${ne} />`,r="connect"):t[0]==="jobs"?(e=c`<${se} />`,r="jobs"):t[0]==="security"?(e=c`<${ue} tab=${t[1]||"acls"} />`,r="security"):e=c`<${te} />`;let o=(a,n,s)=>c`<a href=${n} aria-current=${r===a?"page":void 0}>${s}</a>`;return c`<header>
      <a class="brand" href="#/">Strata</a>
      <nav aria-label="Main">${o("cluster","#/","Cluster")}${o("topics","#/topics","Topics")}${o("groups","#/groups","Groups")}${o("connect","#/connect","Connectors")}${o("jobs","#/jobs","Stream jobs")}${o("security","#/security","Security")}</nav>
    </header>
    <main>${e}</main>`}Lt(c`<${He} />`,document.getElementById("app"));})();
