#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/juniper/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["juniper/new-patient-information"] = (
    "New patient information",
    "Juniper Dental - New patient information - March 2026",
    """
# Welcome to Juniper Dental
Information for new patients. Please read before your first visit.

1. BEFORE YOUR FIRST VISIT
Fill in your medical history form in the patient portal at least 24 hours
before your appointment, or arrive 15 minutes early to fill it in at the
clinic. Tell us about any medicines you take, including blood thinners,
and any allergies. Bring:
- your health fund card (the physical card, for HICAPS claims)
- your Medicare card if your child is eligible for the CDBS
- any X-rays taken at another practice in the last 2 years

2. YOUR FIRST APPOINTMENT
Your first appointment takes about 60 minutes. Your dentist will check
your teeth, gums, bite and jaw, screen for oral cancer and take X-rays if
you need them. You will leave with a written treatment plan.

3. FIRST-VISIT BUNDLE
Most new adult patients choose the first-visit bundle, which is cheaper
than paying for each item:

Item      Service                               Usual fee    In bundle
011       Comprehensive oral examination        $85          included
022 x2    Intraoral X-rays (2 films)            $90          included
114       Scale and clean                       $145         included
121       Topical fluoride                      $40          included
          Total                                 $360         $249*

* The bundle is for new patients aged 18 and over, at their first visit
  only. Health fund rebates are claimed on each item as usual.
<<PAGE>>
4. PAYING FOR YOUR VISIT
Fees are due on the day. We accept EFTPOS, Visa, Mastercard, American
Express (1.5% surcharge) and cash. We don't accept cheques. Claim your
rebate on the spot through HICAPS. For treatment plans over $1,000 you
can ask about a payment plan.

5. YOUR PRIVACY
We collect your health information to give you dental care. We share it
only with your consent, with your health fund when you claim, or when
the law requires it. You can ask for a copy of your dental records at any
time; we provide copies free of charge within 30 days. X-ray images can
be emailed to another practice on request.

6. FEEDBACK AND COMPLAINTS
Tell the practice manager at your clinic first. If you are not happy
with our response, email the Clinical Director at care@juniperdental.example.
We acknowledge complaints within 2 business days and aim to resolve them
within 30 days. You can also contact the Health Care Complaints Commis-
sion in NSW.

7. CONTACT
Booking line: 1300 555 064. After-hours emergencies: 1800 975 707.
Clinic phone numbers and hours are in our help centre under Clinics.
""",
)

DOCS["lumora/security-and-compliance-overview"] = (
    "Lumora Sign security and compliance overview",
    "Lumora Sign GmbH - Security and compliance overview - version 2026-02",
    """
# Security and compliance overview
For IT, security and procurement teams evaluating Lumora Sign.
Version 2026-02. Lumora Sign GmbH, Berlin, Germany.

1. CERTIFICATIONS AND AUDITS
Lumora Sign is certified to ISO/IEC 27001:2022. An independent auditor
issues a SOC 2 Type II report every year, covering the period from
1 October to 30 September. Customers on Business and Enterprise can
request the latest report under a non-disclosure agreement. An external
penetration test is run twice a year, and a summary letter is available
on request. Our qualified signatures are issued by a qualified trust
service provider listed on the EU Trusted List.

2. ENCRYPTION
Data in transit          TLS 1.2 or higher (TLS 1.3 preferred)
Data at rest             AES-256, keys managed in a hardware security
                         module (HSM) in the same region as the data
Document seal            PAdES, RSA 3072-bit certificate
Backups                  AES-256, kept for 35 days

Enterprise customers can bring their own key (BYOK) for the documents
in their account. If you revoke the key, documents can no longer be
opened, including by Lumora staff.

3. AVAILABILITY
Plan            Uptime commitment    Measured
Solo, Team      none (best effort)   -
Business        99.9%                per calendar month
Enterprise      99.95%               per calendar month
Planned maintenance announced at least 7 days ahead does not count as
downtime. Service credits are set out in the customer agreement.
<<PAGE>>
4. ACCESS CONTROL
Customer accounts support SAML single sign-on (Business and Enterprise),
two-factor authentication on every plan, and account roles (Admin,
Sender, Viewer). Lumora staff can only open customer documents if the
customer grants temporary access from a support ticket; access ends
automatically after 72 hours, and every access is logged in the cus-
tomer's audit log.

5. SUB-PROCESSORS
Sub-processor              Purpose                     Location
Hetzner Online GmbH        Hosting, EU region          Germany
Leaseweb Netherlands B.V.  Backups, EU region          Netherlands
Infomaniak Network SA      Hosting, Swiss region       Switzerland
Mailgun Technologies       Email notifications         EU (Germany)
MessageBird B.V.           SMS notifications           Netherlands
We give customers 30 days' notice by email before adding a new
sub-processor, and customers may object within that period.

6. INCIDENTS
If a personal data breach affects your data, we notify your Admins
without undue delay and no later than 48 hours after we become aware of
it, so that you can meet your own 72-hour deadline under the GDPR.

7. CONTACT
Security questions: security@lumorasign.example. To report a vulnera-
bility, see lumorasign.example/security.txt.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "juniper make_pdfs.py")


if __name__ == "__main__":
    main()
